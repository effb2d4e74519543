#include "runtime/capture/capture_protocol.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "runtime/common/option_string.h"
#include "runtime/common/output_template.h"
#include "runtime/common/string_view_bridge.h"

namespace tfprof {

namespace {

constexpr size_t kMaxLineBytes = 64 * 1024;
// Steps, or milliseconds (115 days): a request's numbers stay far from the clock's range.
constexpr uint64_t kMaxRequestCount = uint64_t{10000000000};

bool ParseCount(const std::string &text, uint64_t *value) {
  const char *end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, *value);
  return !text.empty() && error == std::errc() && stop == end;
}

}  // namespace

socklen_t CaptureEndpointAddress(int64_t pid, sockaddr_un *address) {
  std::memset(address, 0, sizeof *address);
  address->sun_family = AF_UNIX;
  // sun_path[0] == '\0': the abstract namespace; the name is the bytes after it, no terminator.
  const std::string name = absl::StrCat(ToAbsl(kCaptureEndpointPrefix), pid);
  std::memcpy(address->sun_path + 1, name.data(), name.size());
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
}

CaptureMessage &CaptureMessage::Set(std::string key, std::string value) {
  fields.emplace_back(std::move(key), std::move(value));
  return *this;
}

std::string CaptureMessage::Get(std::string_view key) const {
  for (const auto &[name, value] : fields) {
    if (name == key) return value;
  }
  return "";
}

bool CaptureMessage::Has(std::string_view key) const {
  for (const auto &field : fields) {
    if (field.first == key) return true;
  }
  return false;
}

std::string CaptureMessage::Encode() const {
  std::string line;
  for (const auto &[key, value] : fields) {
    if (!line.empty()) line += ',';
    line += key;
    line += '=';
    // A newline would end the line early: messages carry paths and error texts, which may hold
    // one; it travels as a space.
    for (const char c : EscapeOptionValue(value)) line += c == '\n' ? ' ' : c;
  }
  return line;
}

absl::StatusOr<CaptureMessage> CaptureMessage::Decode(std::string_view line) {
  absl::StatusOr<std::vector<RawOption>> options = SplitOptionString(line);
  if (!options.ok()) return options.status();
  CaptureMessage message;
  for (RawOption &option : *options) message.Set(std::move(option.key), std::move(option.value));
  return message;
}

CaptureMessage CaptureRequest::ToMessage() const {
  CaptureMessage message;
  message.Set("request", kind == Kind::kDump ? "dump" : "capture");
  if (kind == Kind::kCapture) {
    message.Set("steps", std::to_string(steps))
        .Set("ms", std::to_string(milliseconds))
        .Set("step_wait_ms", std::to_string(step_wait_ms));
  }
  message.Set("output", output);
  if (!options.empty()) message.Set("options", options);
  return message;
}

absl::StatusOr<CaptureRequest> CaptureRequest::FromMessage(const CaptureMessage &message) {
  CaptureRequest request;
  const std::string kind = message.Get("request");
  if (kind == "dump") {
    request.kind = Kind::kDump;
  } else if (kind != "capture") {
    return absl::InvalidArgumentError(
        absl::StrCat("request '", kind, "' is neither capture nor dump"));
  }
  for (const auto &[key, value] : message.fields) {
    uint64_t *count = key == "steps"          ? &request.steps
                      : key == "ms"           ? &request.milliseconds
                      : key == "step_wait_ms" ? &request.step_wait_ms
                                              : nullptr;
    if (count != nullptr && (!ParseCount(value, count) || *count > kMaxRequestCount)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "request field '", key, "': '", value, "' is not a whole number up to ",
          kMaxRequestCount));
    }
  }
  request.output = message.Get("output");
  request.options = message.Get("options");
  if (request.output.empty() || request.output.front() != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("request field 'output': '", request.output, "' is not an absolute path"));
  }
  if (request.kind == Kind::kCapture && (request.steps == 0) == (request.milliseconds == 0)) {
    return absl::InvalidArgumentError("a capture ends after a number of steps or a time: give one");
  }
  return request;
}

bool LineChannel::Send(const CaptureMessage &message) {
  const std::string line = message.Encode() + "\n";
  size_t sent = 0;
  while (sent < line.size()) {
    const ssize_t wrote = send(fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return false;
    sent += static_cast<size_t>(wrote);
  }
  return true;
}

absl::StatusOr<CaptureMessage> LineChannel::Receive(int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const size_t newline = pending_.find('\n');
    if (newline != std::string::npos) {
      const std::string line = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      return CaptureMessage::Decode(line);
    }
    if (pending_.size() > kMaxLineBytes) {
      return absl::InvalidArgumentError("a message longer than 64 KiB");
    }
    if (closed_) return absl::UnavailableError("the other side closed the connection");
    int wait_ms = -1;
    if (timeout_ms >= 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return absl::DeadlineExceededError("no message in time");
      wait_ms = static_cast<int>(left.count());
    }
    pollfd watched{fd_, POLLIN, 0};
    const int ready = poll(&watched, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return absl::UnavailableError(absl::StrCat("poll: ", std::strerror(errno)));
    if (ready == 0) continue;  // the deadline check above ends it
    char buffer[4096];
    const ssize_t got = recv(fd_, buffer, sizeof buffer, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      closed_ = true;
      continue;
    }
    pending_.append(buffer, static_cast<size_t>(got));
  }
}

bool LineChannel::PeerClosed() {
  if (closed_) return true;
  pollfd watched{fd_, POLLIN | POLLRDHUP, 0};
  if (poll(&watched, 1, 0) <= 0) return false;
  if ((watched.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) {
    closed_ = true;
    return true;
  }
  // Readable: the command sends nothing after its request, so these are stray bytes; drop them.
  char buffer[256];
  const ssize_t got = recv(fd_, buffer, sizeof buffer, MSG_DONTWAIT);
  if (got == 0) closed_ = true;
  return closed_;
}

}  // namespace tfprof
