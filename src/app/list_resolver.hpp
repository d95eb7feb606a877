#pragma once
// How the daemon resolves a blocklist's host: through its own engine, so
// the name takes the household's route like any client's (local records,
// a LAN zone, the cache, the encrypted upstreams), never the system
// resolver, which may be this very daemon or not exist yet at boot.
#include <vector>

#include "block/list_fetcher.hpp"
#include "dns/message.hpp"
#include "net/endpoint.hpp"
#include "query/engine.hpp"

namespace nxdns::app {

block::ListResolver engine_resolver(query::Engine& engine);

// The A or AAAA records (as `qtype`) of an answer's answer section, port
// net::https_default_port. Empty for anything but a NOERROR answer.
std::vector<net::Endpoint> answer_addresses(dns::ByteView reply, std::uint16_t qtype);

}  // namespace nxdns::app
