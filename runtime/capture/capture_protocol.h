// What `tfprof capture` and a listening process (prof_listen()) say to each other.
//
// The process listens on a Unix stream socket in Linux's abstract namespace named
// "tfprof-capture/<pid>": no file to leave behind when the process dies, no TCP port. The abstract
// namespace has no file permissions, so each side checks the other's credentials (SO_PEERCRED):
// the process serves only its own user and root, and the command talks only to the process whose
// pid it was given (another user's process cannot pose as it by binding the name first).
//
// Every message is one line in the option-string syntax (option_string.h): `key=value` pairs
// separated by commas, `\,` and `\\` escaped. The command sends one request; the process answers
// with lines whose `event` says what happened (waiting, started, progress) until the last one,
// `done` or `error`, after which it closes the connection.
#pragma once

#include <sys/socket.h>
#include <sys/un.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace tfprof {

inline constexpr std::string_view kCaptureEndpointPrefix = "tfprof-capture/";

// The abstract socket address of process `pid`'s endpoint; returns the address length to pass
// to bind() or connect().
socklen_t CaptureEndpointAddress(int64_t pid, sockaddr_un *address);

// One line: ordered key=value fields.
struct CaptureMessage {
  std::vector<std::pair<std::string, std::string>> fields;

  CaptureMessage &Set(std::string key, std::string value);
  // The field's value, "" when absent.
  std::string Get(std::string_view key) const;
  bool Has(std::string_view key) const;
  // The line, without its '\n'.
  std::string Encode() const;
  // A line as Encode() writes it. Errors name the problem.
  static absl::StatusOr<CaptureMessage> Decode(std::string_view line);
};

// The request a capture starts with.
struct CaptureRequest {
  enum class Kind { kCapture, kDump };
  Kind kind = Kind::kCapture;
  uint64_t steps = 0;              // end after this many whole steps (0: by time)
  uint64_t milliseconds = 0;       // end after this long (0: by steps); with steps, the first
  uint64_t step_wait_ms = 10000;   // how long to wait for a step boundary to start at
  std::string output;              // absolute path the process writes
  std::string options;             // more session options (prof_start()'s syntax)

  CaptureMessage ToMessage() const;
  // Errors: InvalidArgument naming the field.
  static absl::StatusOr<CaptureRequest> FromMessage(const CaptureMessage &message);
};

// Reads and writes lines on a connected socket.
class LineChannel {
 public:
  explicit LineChannel(int fd) : fd_(fd) {}

  // Writes `message` and its '\n' (no SIGPIPE when the peer is gone). False if it could not.
  bool Send(const CaptureMessage &message);
  // The next line, waiting up to `timeout_ms` (-1: for ever). Errors: DeadlineExceeded,
  // Unavailable (the peer closed the connection), InvalidArgument (a line over 64 KiB, or one
  // Decode() refuses).
  absl::StatusOr<CaptureMessage> Receive(int timeout_ms);
  // Whether the peer has closed its end (checked without waiting).
  bool PeerClosed();

 private:
  int fd_;
  std::string pending_;
  bool closed_ = false;
};

}  // namespace tfprof
