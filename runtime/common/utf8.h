// UTF-8 validity: what the JSON writer escapes and the TensorFlow writers replace. Names reach
// tfprof as any bytes (the C ABI promises that); every output that declares text must hold valid
// UTF-8, or its readers (TensorFlow's and TensorBoard's protobuf, JSON parsers) reject the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tfprof {

// Length of the valid UTF-8 sequence at the start of `text`, or 0 if it does not start with one
// (overlong forms, surrogates and code points above U+10FFFF are invalid). ASCII counts as 1.
size_t ValidUtf8Length(std::string_view text);

bool IsValidUtf8(std::string_view text);

// `text` with each byte of every invalid sequence replaced by U+FFFD, as the JSON writer does.
std::string ToValidUtf8(std::string_view text);

// Appends code point `code` (at most U+10FFFF, no surrogate) encoded as UTF-8.
void AppendCodePointUtf8(uint32_t code, std::string *out);

// `text` itself when it is valid UTF-8, else ToValidUtf8(text) kept in `storage`.
std::string_view ValidUtf8View(std::string_view text, std::string &storage);

}  // namespace tfprof
