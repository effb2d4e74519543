// Field numbers of xplane.proto's messages (runtime/formats/proto/tfprof/tensorflow/xplane.proto),
// for the reader and the writer, which walk and encode the wire format by hand.
#pragma once

#include <cstdint>

namespace tfprof::xf {

constexpr uint32_t kSpacePlanes = 1, kSpaceErrors = 2, kSpaceWarnings = 3, kSpaceHostnames = 4;
constexpr uint32_t kPlaneId = 1, kPlaneName = 2, kPlaneLines = 3, kPlaneEventMetadata = 4,
                   kPlaneStatMetadata = 5, kPlaneStats = 6;
constexpr uint32_t kLineId = 1, kLineName = 2, kLineTimestampNs = 3, kLineEvents = 4,
                   kLineDisplayName = 11;
constexpr uint32_t kEventMetadataId = 1, kEventOffsetPs = 2, kEventDurationPs = 3,
                   kEventStats = 4, kEventOccurrences = 5;
constexpr uint32_t kStatMetadataId = 1, kStatDouble = 2, kStatUint64 = 3, kStatInt64 = 4,
                   kStatString = 5, kStatBytes = 6, kStatRef = 7;
// XEventMetadata's and XStatMetadata's own id is field 1, as the map entry's key is.
constexpr uint32_t kMetadataId = 1;
constexpr uint32_t kEventMetadataName = 2, kEventMetadataDisplayName = 4,
                   kEventMetadataStats = 5;
constexpr uint32_t kStatMetadataName = 2;

}  // namespace tfprof::xf
