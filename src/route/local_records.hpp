#pragma once
// The household's own records: hosts files (A, AAAA and the PTRs derived
// from them) and static records written in zone-file syntax, answered
// authoritatively and never forwarded. Immutable once built: a reload
// builds a new set and swaps it in whole.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dns/message.hpp"

namespace nxdns::route {

// RR types a record line may carry.
inline constexpr std::uint16_t type_a = 1;
inline constexpr std::uint16_t type_ns = 2;
inline constexpr std::uint16_t type_cname = 5;
inline constexpr std::uint16_t type_soa = 6;
inline constexpr std::uint16_t type_ptr = 12;
inline constexpr std::uint16_t type_mx = 15;
inline constexpr std::uint16_t type_txt = 16;
inline constexpr std::uint16_t type_aaaa = 28;
inline constexpr std::uint16_t type_srv = 33;

// TTL of the records a hosts file gives (dnsmasq's local TTL is 0; a
// minute keeps a changed hosts file from lingering in clients' caches
// while still sparing the daemon a query per lookup).
inline constexpr std::uint32_t hosts_ttl = 60;

struct Record {
  dns::Bytes owner;  // uncompressed wire form, lower case
  std::uint16_t type = 0;
  std::uint32_t ttl = 0;
  dns::Bytes rdata;  // wire form; names in it uncompressed, lower case
  // Where it was written: "/etc/hosts:12" or "records[3]", for `nxdns why`.
  std::string source;
};

// One record line in zone-file presentation syntax (RFC 1035 §5.1):
//   OWNER [TTL] [IN] TYPE RDATA...
// OWNER is absolute (a trailing dot is optional), TTL defaults to 300,
// TYPE is one of A, AAAA, CNAME, PTR, TXT (one or more quoted or bare
// character-strings), SRV, MX. TTL and IN may come in either order; ';'
// starts a comment. nullopt with `why` (a one-line reason, naming the bad
// field) on any error; "@", wildcard owners and parentheses are errors.
std::optional<Record> parse_record(std::string_view line, std::string source, std::string* why);

// A hosts file (hosts(5)): "ADDRESS NAME [ALIAS...]" per line, '#'
// comments, blank lines. Every name gets an A or AAAA record; each address
// gets one PTR, to the first name written for it in the file. A line whose
// address has a zone index ("fe80::1%eth0") is skipped: no other host
// could use it. CRLF line ends are read like LF. nullopt with
// `why` = "FILE:LINE: reason" on the first bad line (a bad address, a name
// that is not a valid DNS name); nothing of the file is used then.
std::optional<std::vector<Record>> parse_hosts(std::string_view text, std::string_view file, std::string* why);

class LocalRecords {
 public:
  LocalRecords() = default;
  // Identical records (owner, type, rdata) are kept once, with the first
  // one's TTL and source. nullopt with `why` when a CNAME shares its owner
  // with other data (RFC 1034 §3.6.2), naming both sources.
  static std::optional<LocalRecords> build(std::vector<Record> records, std::string* why);

  struct Lookup {
    enum class Kind : std::uint8_t {
      absent,  // no record has this owner: the name is not ours
      nodata,  // the owner exists, without this type (NOERROR, no answer)
      answer,  // `chain` answers it
    };
    Kind kind = Kind::absent;
    // The answer section in order: CNAMEs followed within the local data
    // (at most 8 hops, no loops), then the records of the asked type at the
    // last owner (none when the chain leaves the local data or ends in a
    // name without that type). A CNAME query gets the CNAME itself, ANY
    // every record of the name; neither follows the alias.
    std::vector<const Record*> chain;
  };
  // qname: uncompressed wire form, any case.
  Lookup find(dns::ByteView qname, std::uint16_t qtype) const;
  // The same for a name already in lower case (lower_case_key): the
  // routing step folds a query's name once for every table it asks.
  Lookup find_lower(std::string key, std::uint16_t qtype) const;
  // Whether any record has exactly this owner (any case).
  bool has_owner(dns::ByteView qname) const;
  std::size_t size() const { return count_; }

 private:
  std::unordered_map<std::string, std::vector<Record>> by_owner_;  // key: lower-case wire owner
  std::size_t count_ = 0;
};

}  // namespace nxdns::route
