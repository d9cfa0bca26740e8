#pragma once
// pbdlab's OpenMP threads wait passively (sleep) unless the user chose otherwise.
//
// Why: libgomp's default lets an idle thread spin for a while before it sleeps. On a machine
// whose cores are busy with other work (or with OpenBLAS's threads inside CHOLMOD), spinning
// threads steal the cores that the working threads need: a 0.7 s run took 10 s (README,
// "Threads"). libgomp reads OMP_WAIT_POLICY once, when it is loaded, before main() runs, so
// setting it inside main() would be too late; instead main() starts the program again with
// the variable set (execv of /proc/self/exe with the same arguments), once.
namespace pbdlab {

// If OMP_WAIT_POLICY is unset, sets it to "passive" and re-executes this program with the
// same arguments (never returns then). A value the user gave is kept. If the re-execution is
// impossible (no /proc), returns and the run goes on with libgomp's default.
void adoptPassiveOpenMpWaiting(char** argv);

// "user" if the user set OMP_WAIT_POLICY, "pbdlab" if adoptPassiveOpenMpWaiting() set it,
// "unset" otherwise (libgomp's default: spin, then sleep).
const char* openMpWaitPolicySource();

}  // namespace pbdlab
