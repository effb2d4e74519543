// One thread's step marks paired into steps, by prof_begin_step's documented rules: a begin while
// a step is open ends that step; an end closes the open step; an end with no step open closes
// nothing; a cancelled step's end withdraws the open step. The drain (in clock ticks, for the
// keep window and slow-step detection) and the track walk (in nanoseconds, for the outputs) both
// pair marks through this, so the rule lives once.
#pragma once

#include <algorithm>
#include <cstdint>

namespace tfprof {

template <typename Time>
class StepMarks {
 public:
  struct Step {
    int64_t number = 0;
    Time begin = 0;
    Time end = 0;  // never before `begin`
  };

  // A step begins at `at`. True, with `*ended` filled, when it ended a step that was open.
  bool Begin(int64_t number, Time at, Step *ended) {
    const bool closed = End(at, ended);
    open_ = true;
    number_ = number;
    begin_ = at;
    return closed;
  }

  // The open step ends at `at`. False when none was open.
  bool End(Time at, Step *ended) {
    if (!open_) return false;
    open_ = false;
    *ended = Step{number_, begin_, std::max(at, begin_)};
    return true;
  }

  // The open step is withdrawn (a cancelled step's end). False when none was open.
  bool Cancel(Step *withdrawn) {
    if (!open_) return false;
    open_ = false;
    *withdrawn = Step{number_, begin_, begin_};
    return true;
  }

  bool open() const { return open_; }
  int64_t number() const { return number_; }  // the open step's
  Time begin() const { return begin_; }       // the open step's

 private:
  bool open_ = false;
  int64_t number_ = 0;
  Time begin_ = 0;
};

}  // namespace tfprof
