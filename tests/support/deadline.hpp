#pragma once
// For tests of code that used never to return (a solver loop that ignored its time budget):
// runs `work` on its own thread and waits at most `seconds` for it. If it has not returned by
// then, the test binary ends at once with a message naming `what` (a stuck thread cannot be
// stopped, and waiting for ctest's TIMEOUT would say nothing). An exception of `work` is
// rethrown here.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

namespace pbdlab::test {

template <class Work>
void finishWithin(double seconds, const std::string& what, Work&& work) {
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  std::exception_ptr error;
  std::thread worker([&] {
    try {
      work();
    } catch (...) {
      error = std::current_exception();
    }
    const std::lock_guard<std::mutex> lock(mutex);
    done = true;
    finished.notify_one();
  });
  std::unique_lock<std::mutex> lock(mutex);
  if (!finished.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return done; })) {
    std::fprintf(stderr, "FAILED: %s did not return within %g s (stopping the test binary)\n", what.c_str(), seconds);
    std::fflush(stderr);
    std::_Exit(1);
  }
  lock.unlock();
  worker.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace pbdlab::test
