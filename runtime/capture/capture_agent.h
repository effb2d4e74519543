// A process that waits to be captured: prof_listen() makes it answer `tfprof capture PID`.
//
// Dormant, it runs no session (spans cost the disabled path) and one thread of ours, blocked in
// accept() on the process's endpoint (capture_protocol.h): it wakes only when a command
// connects. Each capture is served on a thread of its own, one at a time: it arms the trigger
// (capture_trigger.h) so that the session starts at the program's next step boundary, reports
// progress, stops and writes the session when its steps or seconds are done (or the command goes
// away, or the program exits), frees it, and the process is dormant again. GPU tracing (CUPTI)
// is subscribed by the capture's session only, so only while capturing.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "runtime/capture/capture_protocol.h"

namespace tfprof {

class CaptureAgent {
 public:
  // The one agent. Never destroyed (its threads may outlive static destructors).
  static CaptureAgent &Get();

  // prof_listen(). `options`: prof_start() options every capture's session gets (a capture's
  // own override them; output= comes from the capture). Errors: InvalidArgument (bad options),
  // FailedPrecondition (already listening), Unavailable (the endpoint could not be made: why).
  absl::Status Listen(const char *options);
  // prof_unlisten(): a capture in progress is ended and written first. Errors:
  // FailedPrecondition (not listening).
  absl::Status Unlisten();
  bool listening();

 private:
  CaptureAgent() = default;

  void AcceptLoop(int listen_fd);
  // A connection, on the worker thread: reads the request and serves it.
  void Serve(int fd);
  void Capture(LineChannel &channel, const CaptureRequest &request);
  void Dump(LineChannel &channel, const CaptureRequest &request);
  // Why a capture in progress should end early ("" while none): the command went away, the
  // program is exiting, or prof_unlisten().
  std::string EndReason(LineChannel &channel);

  static void AtExit();
  static void AfterForkInChild();

  std::mutex mutex_;  // guards the fields below
  int listen_fd_ = -1;
  std::string options_;
  std::thread acceptor_;
  std::thread worker_;
  bool hooks_installed_ = false;

  std::atomic<bool> worker_busy_{false};
  std::atomic<int> connection_fd_{-1};  // the capture's connection, closed in fork() children
  std::atomic<bool> exiting_{false};
  std::atomic<bool> unlistening_{false};
};

}  // namespace tfprof
