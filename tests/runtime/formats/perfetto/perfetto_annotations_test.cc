// A Perfetto debug annotation as the reader's hot path reads it (AnnotationTables::ScanArg): the
// plain shape tfprof writes (an interned name, then one varint value) is read straight, every
// other shape field by field. Annotations are encoded by hand, so each case controls the bytes:
// both paths must give the same key and value, and damage must be damage on either.
#include "runtime/formats/perfetto/perfetto_annotations.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "runtime/common/proto_wire.h"
#include "runtime/formats/perfetto/perfetto_fields.h"
#include "runtime/formats/perfetto/perfetto_sequence_state.h"

namespace {

namespace annotation = tfprof::perfetto_fields::annotation;
using tfprof::AnnotationTables;
using tfprof::AppendLengthDelimited;
using tfprof::AppendVarintField;
using tfprof::ArgValue;
using tfprof::EventArg;
using tfprof::SequenceState;

struct Tables {
  AnnotationTables tables;
  SequenceState sequence;
  Tables() {
    sequence.arg_names.Set(5, tables.NameFor("stream"));
    sequence.arg_names.Set(300, tables.NameFor("correlation"));  // an iid of two bytes
    sequence.arg_strings.Set(9, tables.StringFor("forward"));
  }
  bool Scan(const std::string &bytes, EventArg *key, ArgValue *value) const {
    *key = EventArg::kOther;
    *value = ArgValue();
    return tables.ScanArg(bytes, sequence, key, value);
  }
};

std::string NameThen(uint64_t name_iid, uint32_t field, uint64_t value) {
  std::string bytes;
  AppendVarintField(annotation::kNameIid, name_iid, bytes);
  AppendVarintField(field, value, bytes);
  return bytes;
}

TEST_CASE("perfetto annotations: the plain shape and every other read the same") {
  const Tables t;
  EventArg key;
  ArgValue value;

  // Plain: an interned name, then an integer, a negative one (ten bytes), a bool.
  REQUIRE(t.Scan(NameThen(5, annotation::kIntValue, 7), &key, &value));
  CHECK(key == EventArg::kStream);
  CHECK(value.type == ArgValue::kInt);
  CHECK(value.i == 7);
  REQUIRE(t.Scan(NameThen(5, annotation::kIntValue, static_cast<uint64_t>(int64_t{-3})), &key,
                 &value));
  CHECK(value.i == -3);
  REQUIRE(t.Scan(NameThen(300, annotation::kUintValue, 123456789), &key, &value));
  CHECK(key == EventArg::kCorrelation);
  CHECK(value.type == ArgValue::kUint);
  CHECK(value.u == 123456789);
  REQUIRE(t.Scan(NameThen(5, annotation::kBoolValue, 1), &key, &value));
  CHECK(value.type == ArgValue::kBool);
  // An iid no interned data named: the value is read, the key is no known arg.
  REQUIRE(t.Scan(NameThen(77, annotation::kIntValue, 1), &key, &value));
  CHECK(key == EventArg::kOther);
  CHECK(value.i == 1);

  // Not plain, read field by field: an interned string (a two-byte tag), the value first, the
  // name as text, a third field, a double.
  REQUIRE(t.Scan(NameThen(5, annotation::kStringValueIid, 9), &key, &value));
  CHECK(key == EventArg::kStream);
  CHECK(value.type == ArgValue::kText);
  CHECK(value.text == "forward");
  std::string value_first;
  AppendVarintField(annotation::kIntValue, 4, value_first);
  AppendVarintField(annotation::kNameIid, 5, value_first);
  REQUIRE(t.Scan(value_first, &key, &value));
  CHECK(key == EventArg::kStream);
  CHECK(value.i == 4);
  std::string named;
  AppendLengthDelimited(annotation::kName, "correlation", named);
  AppendVarintField(annotation::kUintValue, 8, named);
  REQUIRE(t.Scan(named, &key, &value));
  CHECK(key == EventArg::kCorrelation);
  CHECK(value.u == 8);
  std::string third = NameThen(5, annotation::kIntValue, 2);
  AppendVarintField(annotation::kUintValue, 6, third);  // the last value wins
  REQUIRE(t.Scan(third, &key, &value));
  CHECK(value.type == ArgValue::kUint);
  CHECK(value.u == 6);
  std::string with_double;
  AppendVarintField(annotation::kNameIid, 5, with_double);
  with_double.push_back(static_cast<char>(annotation::kDoubleValue << 3 | 1));  // fixed64
  const double half = 0.5;
  char half_bytes[8];
  std::memcpy(half_bytes, &half, 8);  // little-endian, as the wire wants, on the machines we run
  with_double.append(half_bytes, 8);
  REQUIRE(t.Scan(with_double, &key, &value));
  CHECK(key == EventArg::kStream);
  CHECK(value.type == ArgValue::kDouble);
  CHECK(value.d == 0.5);
  // An integer of the wrong wire type (fixed64, whose bytes happen to read as a whole varint)
  // is no value: the name only.
  std::string wrong_type;
  AppendVarintField(annotation::kNameIid, 5, wrong_type);
  wrong_type.push_back(static_cast<char>(annotation::kIntValue << 3 | 1));
  wrong_type.append("\x81\x80\x80\x80\x80\x80\x80\x01", 8);
  REQUIRE(t.Scan(wrong_type, &key, &value));
  CHECK(key == EventArg::kStream);
  CHECK(value.type == ArgValue::kNone);
  // A field that is no value (dict entries, wire type 0 here): the name only.
  REQUIRE(t.Scan(NameThen(5, annotation::kDictEntries, 1), &key, &value));
  CHECK(key == EventArg::kStream);
  CHECK(value.type == ArgValue::kNone);

  // Damage: a varint cut short, on either path.
  std::string cut = NameThen(5, annotation::kUintValue, 1000);
  cut.pop_back();
  CHECK_FALSE(t.Scan(cut, &key, &value));
  std::string cut_later = NameThen(5, annotation::kStringValueIid, 1000);
  cut_later.pop_back();
  CHECK_FALSE(t.Scan(cut_later, &key, &value));
}

}  // namespace
