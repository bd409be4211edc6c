// SPDX-License-Identifier: MIT OR Apache-2.0
// How a timing is made and read, as plain arithmetic: the shapes timed, the memory floor, how many
// weight copies the launches rotate over, and the median of the timed replays.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace w8a16::bench {

// The weights of one layer: W [n][k] E4M3 and S [ceil(n/128)][k/128] FP32 (NUMERICS.md 2).
struct Shape {
  std::uint32_t n = 0, k = 0;
};

// "NxK": N >= 1, K a positive multiple of 128 (one scale block per K-step), N*K < 2^32 (the
// kernels' 32-bit offsets). False with *why naming the text and the rule.
bool parse_shape(const std::string& text, Shape* out, std::string* why);
// M in 1..65536. False with *why.
bool check_row_count(std::uint32_t m, std::string* why);
// That, and M*K, M*N below 2^32 (A's and C's offsets). False with *why.
bool check_rows(std::uint32_t m, Shape sh, std::string* why);

// ---- the memory floor --------------------------------------------------------------------
// Bytes a launch moves at least once: W (n k) and S (4 ceil(n/128) k/128) read, A (2 m k) read,
// C (2 m n) written.
double floor_bytes(Shape sh, std::uint32_t m);
// The bytes one weight copy holds: W and S.
double weight_bytes(Shape sh);
// What the floor divides by: a device-to-device copy of `copied_bytes` reads and writes each
// byte, so its bandwidth is 2 * copied_bytes / time.
double copy_bandwidth(std::size_t copied_bytes, double median_us);
// The floor in microseconds: floor_bytes over the copy bandwidth measured in the same run.
double floor_us(double bytes, double copy_bytes_per_s);
// What the JSON's method.floor says the floor is.
inline constexpr const char* kFloorFormula = "bytes (W n*k, S 4*ceil(n/128)*k/128, A 2*m*k, C 2*m*n) / copy bandwidth";
// The copy the floor is measured with: 1 GiB device to device, the median of 12 after a warm-up
// (well past the L2, so it is HBM's bandwidth).
inline constexpr std::size_t kCopyBandwidthBytes = std::size_t{1} << 30;
inline constexpr int kCopyBandwidthBatches = 12;

// ---- weight rotation ---------------------------------------------------------------------
// Copies of `bytes_per_copy` that launches rotate over so that together they pass `rotate_mib`
// MiB (well past the L2: each launch then streams its weights from HBM, as a real layer does);
// never fewer than 2, so that no two consecutive launches read the same copy.
int rotation_copies(double bytes_per_copy, double rotate_mib);

// ---- the reading -------------------------------------------------------------------------
struct Timing {
  bool ok = false;
  std::string error;
  double median_us = 0, min_us = 0, max_us = 0;
  bool graph = false;  // replays of a captured graph (else launches issued one by one from the host)
};
// The median (the upper one of an even count), minimum and maximum of per-launch times; an empty
// list is an error.
Timing summarize(std::vector<float> per_launch_us, bool graph);

}  // namespace w8a16::bench
