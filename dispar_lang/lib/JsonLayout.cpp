#include "dispar_lang/JsonLayout.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace dispar::lang {

void appendJsonString(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
          out += buffer;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void appendJsonNumber(std::string& out, double x) {
  if (!std::isfinite(x)) {
    out += "null";
    return;
  }
  // The shortest digits that read back as x, placed the way nlohmann's dump() places them (its
  // format_buffer): plain notation for decimal points from 10^-4 to 10^15, else d.ddde+XX.
  char buffer[32];
  const char* end = std::to_chars(buffer, buffer + sizeof buffer, x, std::chars_format::scientific).ptr;
  const char* at = buffer;
  if (*at == '-') out += *at++;
  std::string digits;
  for (; at != end && *at != 'e'; ++at)
    if (*at != '.') digits += *at;
  int exponent = 0;  // after the 'e': a sign, then digits (to_chars' text is not NUL-terminated)
  if (at != end) {
    const bool negative = at[1] == '-';
    std::from_chars(at + 2, end, exponent);
    if (negative) exponent = -exponent;
  }
  const int k = static_cast<int>(digits.size());
  const int n = exponent + 1;  // the decimal point's position after the first n digits
  constexpr int kMinExponent = -4, kMaxExponent = 15;
  if (k <= n && n <= kMaxExponent) {  // digits000.0
    out += digits;
    out.append(static_cast<std::size_t>(n - k), '0');
    out += ".0";
  } else if (0 < n && n <= kMaxExponent) {  // dig.its
    out.append(digits, 0, static_cast<std::size_t>(n));
    out += '.';
    out.append(digits, static_cast<std::size_t>(n), std::string::npos);
  } else if (kMinExponent < n && n <= 0) {  // 0.000digits
    out += "0.";
    out.append(static_cast<std::size_t>(-n), '0');
    out += digits;
  } else {  // d.igitse+XX
    out += digits[0];
    if (k > 1) {
      out += '.';
      out.append(digits, 1, std::string::npos);
    }
    char exponentText[16];  // e-324 at most; room for any int, which the compiler cannot rule out
    std::snprintf(exponentText, sizeof exponentText, "e%c%02d", n - 1 < 0 ? '-' : '+', std::abs(n - 1));
    out += exponentText;
  }
}

void JsonLayoutWriter::string(const char* key, const std::string& value) {
  member(key);
  appendJsonString(out_, value);
}

void JsonLayoutWriter::number(const char* key, double value) {
  member(key);
  appendJsonNumber(out_, value);
}

void JsonLayoutWriter::null(const char* key) {
  member(key);
  out_ += "null";
}

void JsonLayoutWriter::member(const char* key) {
  if (empty_.empty()) return;  // the top-level value
  out_ += empty_.back() ? "\n" : ",\n";
  empty_.back() = false;
  out_.append(2 * empty_.size(), ' ');
  if (key == nullptr) return;
  appendJsonString(out_, key);
  out_ += ": ";
}

void JsonLayoutWriter::open(const char* key, char bracket) {
  member(key);
  out_ += bracket;
  empty_.push_back(true);
}

void JsonLayoutWriter::close(char bracket) {
  const bool wasEmpty = empty_.back();
  empty_.pop_back();
  if (!wasEmpty) {
    out_ += '\n';
    out_.append(2 * empty_.size(), ' ');
  }
  out_ += bracket;
}

}  // namespace dispar::lang
