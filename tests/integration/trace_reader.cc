#include "integration/trace_reader.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <doctest/doctest.h>

#include "support/test_files.h"

namespace tfprof_test {

std::string ReadFileBytes(const std::string &path) {
  const bool gzipped = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  return gzipped ? Gunzip(path) : ReadFile(path);
}

prof_stats_t CurrentStats() {
  prof_stats_t stats = {};
  stats.struct_size = sizeof stats;
  REQUIRE_MESSAGE(prof_get_stats(&stats) == PROF_OK, prof_last_error());
  return stats;
}

Json ReadTrace(const std::string &path) {
  const std::string bytes = ReadFileBytes(path);
  Json trace = Json::parse(bytes, nullptr, false);
  REQUIRE_MESSAGE(!trace.is_discarded(), path << " is not valid JSON");
  REQUIRE(trace.is_object());
  REQUIRE(trace.contains("traceEvents"));
  return trace;
}

Json ExportedTrace(const std::string &file_name) {
  const std::string path = TempPath(file_name);
  REQUIRE(prof_export(path.c_str()) == PROF_OK);
  return ReadTrace(path);
}

std::vector<Json> EventsWithPhase(const Json &trace, const std::string &ph) {
  std::vector<Json> events;
  for (const Json &event : trace["traceEvents"]) {
    if (event.value("ph", "") == ph) events.push_back(event);
  }
  return events;
}

std::vector<std::string> SpanNamesByStart(const Json &trace) {
  std::vector<Json> spans = EventsWithPhase(trace, "X");
  std::stable_sort(spans.begin(), spans.end(),
                   [](const Json &a, const Json &b) { return TsNs(a) < TsNs(b); });
  std::vector<std::string> names;
  for (const Json &span : spans) names.push_back(span["name"]);
  return names;
}

std::map<std::pair<int64_t, int64_t>, std::vector<Json>> CompleteEventsByRow(const Json &trace) {
  std::map<std::pair<int64_t, int64_t>, std::vector<Json>> rows;
  for (const Json &event : EventsWithPhase(trace, "X")) {
    rows[{event["pid"].get<int64_t>(), event["tid"].get<int64_t>()}].push_back(event);
  }
  return rows;
}

std::string RowName(const Json &trace, int64_t pid, int64_t tid) {
  for (const Json &event : EventsWithPhase(trace, "M")) {
    if (event["name"] == "thread_name" && event["pid"] == pid && event["tid"] == tid) {
      return event["args"]["name"].get<std::string>();
    }
  }
  return "";
}

int64_t TsNs(const Json &event) { return std::llround(event["ts"].get<double>() * 1000.0); }
int64_t DurNs(const Json &event) { return std::llround(event["dur"].get<double>() * 1000.0); }

std::string NestingProblem(const Json &trace) {
  for (auto &[row, events] : CompleteEventsByRow(trace)) {
    std::sort(events.begin(), events.end(), [](const Json &a, const Json &b) {
      return TsNs(a) != TsNs(b) ? TsNs(a) < TsNs(b) : DurNs(a) > DurNs(b);
    });
    std::vector<int64_t> open_ends;
    for (const Json &event : events) {
      const int64_t begin = TsNs(event);
      const int64_t end = begin + DurNs(event);
      while (!open_ends.empty() && open_ends.back() <= begin) open_ends.pop_back();
      if (!open_ends.empty() && end > open_ends.back()) {
        return "row tid " + std::to_string(row.second) + ": '" + event["name"].get<std::string>() +
               "' [" + std::to_string(begin) + ", " + std::to_string(end) +
               ") overlaps its enclosing event ending at " + std::to_string(open_ends.back());
      }
      open_ends.push_back(end);
    }
  }
  return "";
}

std::string TempPath(const std::string &file_name) {
  // A new directory every time (mkdtemp): a name built from the pid could meet a directory an
  // earlier run left behind under a reused pid, with files a test does not expect.
  const char *base = std::getenv("TMPDIR");
  std::string directory = std::string(base != nullptr ? base : "/tmp") + "/tfprof_test_XXXXXX";
  REQUIRE(mkdtemp(directory.data()) != nullptr);
  return directory + "/" + file_name;
}

}  // namespace tfprof_test
