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

#include "tests/support/step_run.hpp"

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

// One step of `solver` (set up for `problem`) from the initial state with only a time budget of
// `max_seconds` (100 iterations, no residual target), which must return within 60 s.
inline StepRun stepWithinTimeBudget(Solver& solver, const Problem& problem, double max_seconds, const std::string& what) {
  Budget budget;
  budget.max_iterations = 100;
  budget.max_seconds = max_seconds;
  budget.target_relative_residual = 0.0;
  StepRun run;
  finishWithin(60.0, what, [&] { run = runStep(solver, problem, initialState(problem), budget); });
  return run;
}

}  // namespace pbdlab::test
