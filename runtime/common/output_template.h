// Output paths that name the process writing them: `%p` (its pid) and `%r` (its rank in a
// distributed job), shared by the preload library's TFPROF_OUTPUT and `tfprof capture -o`.
// Header-only: the preload library uses it without linking the runtime's internals.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace tfprof {

// The launchers' rank variables, in the order they are read: torchrun and most launchers set RANK,
// Open MPI OMPI_COMM_WORLD_RANK, Slurm SLURM_PROCID, MPICH and Intel MPI PMI_RANK.
inline constexpr const char *kRankVariables[] = {"RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID",
                                                 "PMI_RANK"};

// The first rank variable `lookup(name)` finds set and non-empty, else "0".
template <typename Lookup>
std::string RankFromVariables(const Lookup &lookup) {
  for (const char *name : kRankVariables) {
    std::optional<std::string> rank = lookup(name);
    if (rank && !rank->empty()) return *rank;
  }
  return "0";
}

// `output_template` with `%p` replaced by `pid`, `%r` by `rank` and `%%` by `%`. Returns false,
// with an error that starts with `label` (how the caller was given the template, such as
// "TFPROF_OUTPUT") and names the offset, for any other `%` sequence.
inline bool ExpandOutputTemplate(const std::string &output_template, int64_t pid,
                                 const std::string &rank, std::string *path, std::string *error,
                                 const std::string &label = "TFPROF_OUTPUT") {
  path->clear();
  for (size_t at = 0; at < output_template.size(); ++at) {
    const char c = output_template[at];
    if (c != '%') {
      path->push_back(c);
      continue;
    }
    const char next = at + 1 < output_template.size() ? output_template[at + 1] : '\0';
    if (next == 'p') {
      *path += std::to_string(pid);
    } else if (next == 'r') {
      *path += rank;
    } else if (next == '%') {
      path->push_back('%');
    } else {
      *error = label + "='" + output_template + "': '%" + std::string(next ? 1 : 0, next) +
               "' at offset " + std::to_string(at) +
               " is not a placeholder; accepts %p (pid), %r (rank) and %% (a literal %)";
      return false;
    }
    ++at;
  }
  return true;
}

// Whether the template names the pid (`%p`), so that each process gets its own file.
inline bool TemplateNamesPid(const std::string &output_template) {
  for (size_t at = 0; at + 1 < output_template.size(); ++at) {
    if (output_template[at] != '%') continue;
    if (output_template[at + 1] == 'p') return true;
    ++at;  // skip the placeholder's letter ("%%p" is a literal "%p")
  }
  return false;
}

// Whether it names the pid or the rank: what tells several processes' files apart.
inline bool TemplateNamesProcess(const std::string &output_template) {
  for (size_t at = 0; at + 1 < output_template.size(); ++at) {
    if (output_template[at] != '%') continue;
    if (output_template[at + 1] == 'p' || output_template[at + 1] == 'r') return true;
    ++at;
  }
  return false;
}

// A template relative to the working directory made absolute, so that a process that writes it
// from another directory (a program that changed directory, one `tfprof capture` asks) writes
// where the user asked. Placeholders and a trailing '/' stay; a '%' in the directory's own name
// is escaped as "%%". Unchanged when absolute or when the directory cannot be found.
inline std::string AbsoluteOutputTemplate(const std::string &path) {
  if (!path.empty() && path.front() == '/') return path;
  std::error_code error;
  const std::filesystem::path directory = std::filesystem::current_path(error);
  if (error) return path;
  std::string absolute;
  for (const char c : directory.string()) {
    absolute += c;
    if (c == '%') absolute += '%';
  }
  if (absolute.empty() || absolute.back() != '/') absolute += '/';
  return absolute + path;
}

// `value` with `,` and `\` escaped, for one `key=value` of an option string (option_string.h).
inline std::string EscapeOptionValue(const std::string &value) {
  std::string escaped;
  for (const char c : value) {
    if (c == ',' || c == '\\') escaped.push_back('\\');
    escaped.push_back(c);
  }
  return escaped;
}

}  // namespace tfprof
