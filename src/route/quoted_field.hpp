#pragma once
// A field of the operator's input quoted in an error message: control
// octets escaped (\DDD) and long text cut, so a reason stays one readable
// line whatever the file or record held.
#include <string>
#include <string_view>

namespace nxdns::route {

inline std::string quoted_field(std::string_view field) {
  constexpr std::size_t max_shown = 40;
  std::string s = "'";
  for (std::size_t i = 0; i < field.size() && i < max_shown; ++i) {
    const auto c = static_cast<unsigned char>(field[i]);
    if (c < 0x20 || c == 0x7F) {
      s += '\\';
      s += static_cast<char>('0' + c / 100);
      s += static_cast<char>('0' + c / 10 % 10);
      s += static_cast<char>('0' + c % 10);
    } else {
      s += static_cast<char>(c);
    }
  }
  if (field.size() > max_shown) s += "...";
  return s + "'";
}

}  // namespace nxdns::route
