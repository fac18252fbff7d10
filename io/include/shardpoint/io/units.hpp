// shardpoint/io/units.hpp -- byte sizes as people write and read them.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_IO_UNITS_HPP
#define SHARDPOINT_IO_UNITS_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace shardpoint::io {

/// `text`, all of it, as a decimal number: a sign, digits, a point, an
/// exponent ("8", "-2.5", "1e6", "+3"); nothing for anything else -- " 4",
/// "0x10", "inf" and "nan", which the C library reads too -- or a number
/// beyond a double's range.
std::optional<double> read_decimal(std::string_view text);

/// Why read_decimal refuses `text`, in the words of every message: "'x' is
/// not a number", "'1e400' is beyond a double's range (about 1.8e308)",
/// "'1e-400' is below a double's smallest (about 2.2e-308); give 0".
std::string decimal_error(std::string_view text);

/// Whether `text` is a decimal number too large for a double (1e400).
bool decimal_overflows(std::string_view text);

/// "900MiB", "16GB", "1.5 GiB", "4096", "2e9": bytes as a double; decimal
/// units (kB, MB, GB, TB, PB, EB) are powers of 1000, binary ones (KiB, MiB,
/// GiB, TiB, PiB, EiB) of 1024; "B" optional, case ignored. Nothing for
/// anything else, a sign or a value beyond a double.
std::optional<double> parse_bytes(std::string_view text);

/// Whether `text`'s unit is written as bits: an upper-case prefix and a
/// lower-case b ("100Gb", "25Mb/s", "1Gib"), the usual spelling of gigabits.
/// parse_bytes refuses it (a link quoted in Gb/s read as GB/s is 8 times
/// too fast); parse_size says why. All lower case ("16gb") is bytes.
bool written_in_bits(std::string_view text);
/// The words for such a text: "'100Gb/s': 'Gb' is bits (a lowercase b), 8
/// to a byte; give bytes, with B (GB)".
std::string bits_message(std::string_view text);

/// `text` as a whole number of bytes (parse_bytes' forms), at most 2^62
/// (4 EiB); digits with a unit are read exactly as integers (a double keeps
/// only 53 bits: 9007199254740993 stays itself). bad_parameter_error naming
/// `flag` otherwise: "--device-memory 'lots' is not a size (e.g. 32GiB, 16GB,
/// 123456789)", "... is more than 4 EiB (2^62 bytes)", "... is not a whole
/// number of bytes" ("1.3B").
std::int64_t parse_size(std::string_view flag, std::string_view text);

/// A device's memory: parse_size, and more than 0 ("--device-memory: a
/// device's memory must be more than 0 bytes"), in every command alike.
std::int64_t parse_capacity(std::string_view flag, std::string_view text);

/// "17 B", "4.0 KiB", "12.3 MiB", "2.00 GiB", up to "4.00 EiB".
std::string human_bytes(double bytes);

/// Seconds in the unit that reads best, four digits: "39.96 ns", "29.04 us",
/// "4.392 ms", "1.234 s", whole seconds from 10^4 s; 0.99999 ms is "1 ms",
/// never "1000 us"; below 10^-4 ns, "0.000000768 ns".
std::string human_seconds(double seconds);

/// A number for people, never with an exponent: at most four significant
/// digits ("41.33", "0.000001234"), whole numbers as they are, and every
/// digit from 10^4 ("123457").
std::string human_number(double value);

/// FLOP/s in the unit that reads best: "1 FLOP/s", "2.5 GFLOP/s",
/// "50 TFLOP/s", up to EFLOP/s ("1000000000000 EFLOP/s" past them).
std::string human_flops(double flops_per_second);

} // namespace shardpoint::io

#endif // SHARDPOINT_IO_UNITS_HPP
