// Byte sizes as people write them.
#include <doctest/doctest.h>
#include <string>
#include <vector>

#include <shardpoint/detail/text.hpp>
#include <shardpoint/error.hpp>
#include <shardpoint/io/units.hpp>
#include <shardpoint/synthetic.hpp>

#include <shardpoint/io/detail/table.hpp>

using shardpoint::io::human_bytes;
using shardpoint::io::parse_bytes;
using shardpoint::io::read_decimal;

TEST_CASE("sizes with and without units") {
  CHECK(parse_bytes("4096") == 4096.0);
  CHECK(parse_bytes("900MiB") == 900.0 * 1024 * 1024);
  CHECK(parse_bytes("16GB") == 16e9);
  CHECK(parse_bytes("1.5 GiB") == 1.5 * 1024 * 1024 * 1024);
  CHECK(parse_bytes("2e9") == 2e9);
  CHECK(parse_bytes("32gib") == 32.0 * (1ULL << 30));
  CHECK(parse_bytes("10 kB") == 10000.0);
  CHECK_FALSE(parse_bytes("").has_value());
  CHECK_FALSE(parse_bytes("-1").has_value());
  CHECK_FALSE(parse_bytes("12 parsecs").has_value());
  CHECK_FALSE(parse_bytes("GiB").has_value());
  CHECK_FALSE(parse_bytes("inf").has_value());
  CHECK_FALSE(parse_bytes("0x10").has_value()); // decimal only
  CHECK_FALSE(parse_bytes("0x1p4GB").has_value());
  CHECK(parse_bytes(".5KiB") == 512.0);
  CHECK_FALSE(parse_bytes("1e GB").has_value());
}

// A trial's --intra-node-bandwidth 100Gb/s was read as 100 GB/s: 8 times
// the link. Bits as usually written are refused, in words; all lower case
// stays bytes.
TEST_CASE("sizes written in bits are refused, not read as bytes") {
  for (const char* bits : {"100Gb", "25Mb/s", "1Gib", "16 Tb", "3Kb", "100Gb/s"}) {
    CAPTURE(bits);
    CHECK(shardpoint::io::written_in_bits(bits));
    CHECK_FALSE(parse_bytes(bits).has_value());
  }
  for (const char* bytes : {"100GB", "16gb", "32gib", "10 kB", "4096", "1.5 GiB", "5 B"}) {
    CAPTURE(bytes);
    CHECK_FALSE(shardpoint::io::written_in_bits(bytes));
    CHECK(parse_bytes(bytes).has_value());
  }
  CHECK(shardpoint::io::bits_message("100Gb/s") ==
        "'100Gb/s': 'Gb' is bits (a lowercase b), 8 to a byte; give bytes, with B (GB)");
  CHECK_THROWS_WITH(shardpoint::io::parse_size("--device-memory", "16Gb"),
                    "--device-memory '16Gb': 'Gb' is bits (a lowercase b), 8 to a byte; give "
                    "bytes, with B (GB)");
}

TEST_CASE("decimal numbers, all of the text, and nothing the C library reads besides") {
  CHECK(read_decimal("8") == 8.0);
  CHECK(read_decimal("-2.5") == -2.5);
  CHECK(read_decimal("+3") == 3.0);
  CHECK(read_decimal("1e6") == 1e6);
  CHECK(read_decimal(".5") == 0.5);
  for (const char* bad : {"", " 4", "4 ", "0x10", "inf", "nan", "-inf", "1e999", "+-5", "++5", "+",
                          "1,5", "e5", "5e"}) {
    CAPTURE(bad);
    CHECK_FALSE(read_decimal(bad).has_value());
  }
}

TEST_CASE("why a text is not a decimal number: not one, or beyond a double") {
  using shardpoint::io::decimal_error;
  using shardpoint::io::decimal_overflows;
  CHECK(decimal_error("x") == "'x' is not a number");
  CHECK(decimal_error("nan") == "'nan' is not a number");
  CHECK(decimal_error("1e400x") == "'1e400x' is not a number");
  CHECK(decimal_error("1e400") == "'1e400' is beyond a double's range (about 1.8e308)");
  CHECK(decimal_error("+1e400") == "'+1e400' is beyond a double's range (about 1.8e308)");
  CHECK(
      decimal_error(std::string(400, '9')).ends_with("is beyond a double's range (about 1.8e308)"));
  CHECK(decimal_error("-1E-400") ==
        "'-1E-400' is below a double's smallest (about 2.2e-308); give 0");
  CHECK(decimal_overflows("-1e400"));
  CHECK_FALSE(decimal_overflows("1e-400"));
  CHECK_FALSE(decimal_overflows("1e300"));
  CHECK_FALSE(decimal_overflows("x"));
}

TEST_CASE("human-readable sizes") {
  CHECK(human_bytes(17) == "17 B");
  CHECK(human_bytes(4096) == "4.0 KiB");
  CHECK(human_bytes(3.5 * 1024 * 1024) == "3.5 MiB");
  CHECK(human_bytes(2.0 * 1024 * 1024 * 1024) == "2.00 GiB");
  CHECK(human_bytes(1023.0 * 1024 * 1024 * 1024) == "1023.00 GiB");
  CHECK(human_bytes(1.5 * 1024 * 1024 * 1024 * 1024) == "1.50 TiB");
  CHECK(human_bytes(4.0 * 1024 * 1024 * 1024 * 1024 * 1024 * 1024) == "4.00 EiB"); // 2^62
  CHECK(human_bytes(2048.0 * 1024 * 1024 * 1024 * 1024 * 1024 * 1024) == "2048.00 EiB");
  // The unit is chosen after rounding: just below a unit reads as that unit.
  CHECK(human_bytes(1023) == "1023 B");
  CHECK(human_bytes(1023.7) == "1.0 KiB");
  CHECK(human_bytes(1048575) == "1.0 MiB");           // not "1024.0 KiB"
  CHECK(human_bytes(1048575.0 * 1024) == "1.00 GiB"); // not "1024.0 MiB"
  CHECK(human_bytes(1024.0 * 1024 * 1024 * 1024 - 1) == "1.00 TiB");
  CHECK(human_bytes(1023.9 * 1024) == "1023.9 KiB");
  CHECK(human_bytes(1023.99 * 1024 * 1024 * 1024) == "1023.99 GiB");
}

TEST_CASE("human-readable times") {
  using shardpoint::io::human_seconds;
  CHECK(human_seconds(0) == "0 s");
  CHECK(human_seconds(3.996e-8) == "39.96 ns"); // a trial's "0.03996 us"
  CHECK(human_seconds(2.904e-5) == "29.04 us");
  CHECK(human_seconds(4.392e-3) == "4.392 ms");
  CHECK(human_seconds(1.234) == "1.234 s");
  CHECK(human_seconds(0.99999e-3) == "1 ms"); // not "1000 us"
  CHECK(human_seconds(0.99999) == "1 s");
  CHECK(human_seconds(9999.7) == "10000 s"); // not "1e+04 s"
  CHECK(human_seconds(123456.7) == "123457 s");
  CHECK(human_seconds(7.68e-16) == "0.000000768 ns"); // not "7.68e-07 ns"
  CHECK(human_seconds(1e300).size() == 303);          // every digit, not the first 47
}

TEST_CASE("numbers as tables show them: no exponent, however small or large") {
  using shardpoint::detail::plain_number;
  CHECK(plain_number(0) == "0");
  CHECK(plain_number(522) == "522");
  CHECK(plain_number(2.5) == "2.5");
  CHECK(plain_number(1.23456) == "1.235");
  CHECK(plain_number(0.015326) == "0.015326");
  CHECK(plain_number(-0.25) == "-0.25");
  CHECK(plain_number(1e13) == "10000000000000");
  // Below what six decimals show: four significant digits (a table read
  // "1e-09").
  CHECK(plain_number(1e-9) == "0.000000001");
  CHECK(plain_number(1.2346e-9) == "0.000000001235");
  CHECK(plain_number(-3e-7) == "-0.0000003");
  CHECK(plain_number(4.9e-324).find('e') == std::string::npos);
  CHECK(plain_number(4.9e-324).rfind("0.000", 0) == 0);
}

TEST_CASE("numbers and FLOP/s for people: four significant digits, no exponent") {
  using shardpoint::io::human_flops;
  using shardpoint::io::human_number;
  CHECK(human_number(0) == "0");
  CHECK(human_number(41.3333) == "41.33");
  CHECK(human_number(1e-6) == "0.000001"); // a trial's timeline read "1e-06"
  CHECK(human_number(2.2987e-8) == "0.00000002299");
  CHECK(human_number(-0.5) == "-0.5");
  CHECK(human_number(1234.5678) == "1235");
  CHECK(human_number(123456.7) == "123457");
  CHECK(human_number(1e18) == "1000000000000000000");
  CHECK(human_number(1e300).size() == 301);
  CHECK(human_flops(1) == "1 FLOP/s");
  CHECK(human_flops(1500) == "1.5 kFLOP/s");
  CHECK(human_flops(50e12) == "50 TFLOP/s");
  CHECK(human_flops(999.99e9) == "1 TFLOP/s"); // the unit after rounding
  CHECK(human_flops(1e30) == "1000000000000 EFLOP/s");
}

TEST_CASE("sizes up to exabytes, whole numbers read exactly as integers") {
  using shardpoint::io::parse_size;
  CHECK(parse_bytes("2PB") == 2e15);
  CHECK(parse_bytes("1EiB") == static_cast<double>(1ULL << 60));
  CHECK(parse_size("--x", "9007199254740993") == 9007199254740993);       // 2^53 + 1
  CHECK(parse_size("--x", "4611686018427387904") == 4611686018427387904); // 2^62
  CHECK(parse_size("--x", "4EiB") == 4611686018427387904);
  CHECK(parse_size("--x", "1.5 GiB") == 1610612736);
  CHECK(parse_size("--x", "2e9") == 2000000000);
  const auto refused = [](const char* text) {
    try {
      parse_size("--device-memory", text);
    } catch (const shardpoint::bad_parameter_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(refused("4611686018427387905") ==
        "--device-memory '4611686018427387905' is more than 4 EiB (2^62 bytes)");
  CHECK(refused("4097PiB") == "--device-memory '4097PiB' is more than 4 EiB (2^62 bytes)");
  CHECK(refused(std::string(30, '9').c_str()).ends_with("is more than 4 EiB (2^62 bytes)"));
  CHECK(refused("1e400") == "--device-memory '1e400' is more than 4 EiB (2^62 bytes)");
  CHECK(refused("1.3B") == "--device-memory '1.3B' is not a whole number of bytes");
  for (const char* bad : {"", "GiB", "-1", "+1", "1 ZiB", "1 iB", "1 bb", "1e-400x", "nan"}) {
    CAPTURE(bad);
    CHECK(refused(bad).ends_with("is not a size (e.g. 32GiB, 16GB, 123456789)"));
  }
}

TEST_CASE("a report's table: columns as wide as their widest cell, no line ending in a space") {
  using shardpoint::io::detail::text_table;
  text_table fixed({{4}, {6, text_table::side::left, "  "}, {3}});
  fixed.row({"n", "name", "x"});
  fixed.row({"12345", "ab", ""});
  CHECK(fixed.text() == "    n  name     x\n"
                        "12345  ab\n");
  // Characters, not bytes: UTF-8 names line up (a trial's 'w 0 ü').
  text_table names({{4, text_table::side::left}, {3}});
  names.row({"w 0 \xc3\xbc", "1"});
  names.row({"w", "22"});
  CHECK(names.text() == "w 0 \xc3\xbc   1\n"
                        "w      22\n");
  // Random cells against a column-at-a-time reference: every cell of a
  // column starts (left) or ends (right) at the same place.
  shardpoint::synthetic::splitmix64 rng(5);
  for (int round = 0; round < 300; ++round) {
    CAPTURE(round);
    const std::size_t columns = 1 + rng.below(5);
    std::vector<text_table::column> spec;
    for (std::size_t c = 0; c < columns; ++c) {
      spec.push_back({rng.below(8), rng.below(2) ? text_table::side::left : text_table::side::right,
                      std::string(1 + rng.below(2), ' ')});
    }
    std::vector<std::vector<std::string>> rows(1 + rng.below(6));
    for (auto& r : rows) {
      for (std::size_t c = 0; c < columns; ++c) {
        r.emplace_back(rng.below(12), static_cast<char>('a' + rng.below(26)));
      }
    }
    text_table t(spec);
    for (const auto& r : rows) {
      t.row(r);
    }
    // The reference: each column's start on the line (the widths and
    // separators before it), each cell written into a line of spaces there.
    std::vector<std::size_t> start(columns), widths(columns);
    std::size_t at = 0;
    for (std::size_t c = 0; c < columns; ++c) {
      widths[c] = spec[c].width;
      for (const auto& r : rows) {
        widths[c] = std::max(widths[c], r[c].size());
      }
      at += c > 0 ? spec[c].before.size() : 0;
      start[c] = at;
      at += widths[c];
    }
    std::string expected;
    for (const auto& r : rows) {
      std::string line(at, ' ');
      for (std::size_t c = 0; c < columns; ++c) {
        const auto from =
            start[c] + (spec[c].align == text_table::side::left ? 0 : widths[c] - r[c].size());
        line.replace(from, r[c].size(), r[c]);
      }
      line.erase(line.find_last_not_of(' ') == std::string::npos ? 0
                                                                 : line.find_last_not_of(' ') + 1);
      expected += line + "\n";
    }
    CHECK(t.text() == expected);
  }
  CHECK(shardpoint::io::detail::whole_number(1e20) == "100000000000000000000");
  CHECK(shardpoint::io::detail::whole_number(41.5) == "42");
}
