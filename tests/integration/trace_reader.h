// Helpers for tests that drive the C ABI and read back what tfprof exported: parse a Chrome trace (plain or
// gzipped), pick events, and check that every row nests properly.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tfprof/tfprof.h"

namespace tfprof_test {

using Json = nlohmann::json;

// Parses `path` (".gz" is decompressed). Fails the current test if the file is unreadable or
// not valid JSON.
Json ReadTrace(const std::string &path);

// prof_export() of the current or last session to TempPath(file_name) (failing the test if it
// fails), read back with ReadTrace().
Json ExportedTrace(const std::string &file_name);

// The events of `trace` with phase `ph` ("X", "M", "C", "i").
std::vector<Json> EventsWithPhase(const Json &trace, const std::string &ph);

// The names of the complete events ("X"), in the order of their start times.
std::vector<std::string> SpanNamesByStart(const Json &trace);

// Complete events grouped by (pid, tid).
std::map<std::pair<int64_t, int64_t>, std::vector<Json>> CompleteEventsByRow(const Json &trace);

// Row name from the thread_name metadata of (pid, tid); "" if none.
std::string RowName(const Json &trace, int64_t pid, int64_t tid);

// "" if, on every row, any two complete events are either disjoint or one contains the other
// (what Perfetto needs to draw a row without overflow tracks); otherwise a description of the
// first offending pair.
std::string NestingProblem(const Json &trace);

// Timestamps in the file are microseconds with three decimals; these give integer nanoseconds.
int64_t TsNs(const Json &event);
int64_t DurNs(const Json &event);

// A fresh path under the test's temporary directory, e.g. TempPath("trace.json").
std::string TempPath(const std::string &file_name);

// The whole file as bytes (decompressed when it ends in ".gz").
std::string ReadFileBytes(const std::string &path);

// prof_get_stats() for the current or last session; fails the test if the call fails.
prof_stats_t CurrentStats();

}  // namespace tfprof_test
