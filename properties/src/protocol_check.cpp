// SPDX-License-Identifier: MIT OR Apache-2.0
#include "w8a16/properties/protocol_check.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "w8a16/device/kernels.hpp"
#include "w8a16/properties/external_tool.hpp"

extern char** environ;

namespace w8a16::props {
namespace {

struct Insn {
  std::uint64_t addr = 0;
  bool guarded = false;  // @P / @!P: may not execute
  bool never = false;    // @!PT: never executes (the compiler's padding)
  std::string op, operands;
};

enum class Kind {
  other,
  wgmma,
  wgmma_wait_all,
  arrive,
  wait,
  fence,
  copy,
  branch,
  exit,
  jump_table,
  // cp.async (PTX ISA 9.7.9.25): a copy into shared memory (LDGSTS), cp.async.commit_group
  // (LDGDEPBAR), cp.async.wait_group N (DEPBAR.LE SB0, N); a CTA barrier (BAR.SYNC: bar.sync,
  // __syncthreads, 9.7.13.1) and a shared-memory read (LDS, LDSM).
  async_copy,
  async_commit,
  async_wait,
  cta_barrier,
  smem_read,
  smem_write,  // STS: a generic-proxy store to shared memory
};

Kind kind_of(const Insn& i) {
  const std::string& op = i.op;
  auto starts = [&](const char* p) { return op.rfind(p, 0) == 0; };
  if (i.never) return Kind::other;
  if (starts("LDGSTS")) return Kind::async_copy;
  if (starts("LDGDEPBAR")) return Kind::async_commit;
  if (starts("DEPBAR.LE") && !i.guarded && i.operands.find("SB0") != std::string::npos) return Kind::async_wait;
  if ((starts("BAR.SYNC") || starts("BAR.RED")) && !i.guarded) return Kind::cta_barrier;
  if (starts("LDS") || starts("LDSM")) return Kind::smem_read;
  if (starts("STS")) return Kind::smem_write;
  if (starts("HGMMA")) return Kind::wgmma;
  // wgmma.wait_group 0 (the guarded form waits only where its predicate holds: not a cover).
  if (starts("WARPGROUP.DEPBAR.LE") && !i.guarded && i.operands.find("gsb0") != std::string::npos &&
      i.operands.find("0x0") != std::string::npos)
    return Kind::wgmma_wait_all;
  if (starts("SYNCS.ARRIVE")) return Kind::arrive;
  if (starts("SYNCS.PHASECHK") && op.find("TRYWAIT") != std::string::npos) return Kind::wait;
  if (starts("FENCE.VIEW.ASYNC") && !i.guarded) return Kind::fence;
  if (starts("UTMALDG") || starts("UBLKCP")) return Kind::copy;
  if (starts("BRX") || starts("JMX")) return Kind::jump_table;
  if (starts("BRA")) return Kind::branch;
  if (starts("EXIT") || starts("RET")) return Kind::exit;
  return Kind::other;
}

std::string hex(std::uint64_t a) {
  std::ostringstream o;
  o << "0x" << std::hex << a;
  return o.str();
}

// cuobjdump -sass text into functions (name -> instructions in address order). A function listed
// for several architectures keeps its sm_90a code (the only cubin the Hopper tier is in).
std::map<std::string, std::vector<Insn>> parse_sass(const std::string& text) {
  static const std::regex fn(R"(^\s*Function\s*:\s*(\S+))");
  static const std::regex arch(R"(arch\s*=\s*(sm_\w+))");
  static const std::regex insn(R"(^\s*/\*([0-9a-fA-F]{1,16})\*/\s+(@!?U?P[0-9T]\s+)?([A-Z][A-Z0-9_.]*)([^;]*);)");
  std::map<std::string, std::vector<Insn>> out;
  std::istringstream in(text);
  std::string line, current, current_arch;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, arch)) current_arch = m[1];
    if (std::regex_search(line, m, fn)) {
      current = m[1];
      if (out.count(current) && current_arch != "sm_90a") current.clear();  // keep the first, or sm_90a's
      else out[current].clear();
      continue;
    }
    if (current.empty() || !std::regex_search(line, m, insn)) continue;
    Insn i;
    i.addr = std::stoull(m[1].str(), nullptr, 16);
    i.guarded = m[2].matched;
    i.never = m[2].matched && m[2].str().rfind("@!PT", 0) == 0;
    i.op = m[3];
    i.operands = m[4];
    out[current].push_back(i);
  }
  return out;
}

struct Graph {
  std::vector<Insn> insns;
  std::vector<Kind> kinds;
  std::vector<std::vector<std::size_t>> next;
};

// Successors: the next instruction unless an unguarded branch, exit or jump table ends the flow; a
// branch's target; a jump table's targets are not in the text, so every instruction that no
// instruction falls into (a block after an unconditional end) stands in for them.
bool build_graph(std::vector<Insn> insns, Graph* g, std::string* why) {
  g->insns = std::move(insns);
  const std::size_t n = g->insns.size();
  g->kinds.resize(n);
  g->next.assign(n, {});
  std::map<std::uint64_t, std::size_t> at;
  for (std::size_t k = 0; k < n; ++k) {
    at[g->insns[k].addr] = k;
    g->kinds[k] = kind_of(g->insns[k]);
  }
  static const std::regex target(R"(0x([0-9a-fA-F]{1,16})\s*$)");  // 64 bits at most: no throw
  std::vector<std::size_t> unfallen;                               // instructions nothing falls into
  bool has_table = false;
  for (std::size_t k = 0; k < n; ++k) {
    const Insn& i = g->insns[k];
    const Kind kd = g->kinds[k];
    const bool ends = !i.guarded &&
                      (kd == Kind::exit || kd == Kind::jump_table || (kd == Kind::branch && i.op == "BRA"));
    if (!ends && k + 1 < n) g->next[k].push_back(k + 1);
    if (ends && k + 1 < n) unfallen.push_back(k + 1);
    if (kd == Kind::jump_table) has_table = true;
    if (kd == Kind::branch) {
      std::smatch m;
      if (!std::regex_search(i.operands, m, target)) {
        *why = "a branch whose target cannot be read at " + hex(i.addr) + " (" + i.op + i.operands + ")";
        return false;
      }
      const auto t = at.find(std::stoull(m[1].str(), nullptr, 16));
      if (t == at.end()) {
        *why = "a branch to an address outside the function at " + hex(i.addr);
        return false;
      }
      g->next[k].push_back(t->second);
    }
  }
  if (has_table)
    for (std::size_t k = 0; k < n; ++k)
      if (g->kinds[k] == Kind::jump_table) g->next[k].insert(g->next[k].end(), unfallen.begin(), unfallen.end());
  return true;
}

// The instructions reachable from the successors of `from`, not entering those `stop` holds (they
// are reached, not passed).
template <class Stop>
std::vector<bool> reach(const Graph& g, std::size_t from, Stop stop) {
  std::vector<bool> seen(g.insns.size(), false);
  std::vector<std::size_t> todo(g.next[from].begin(), g.next[from].end());
  while (!todo.empty()) {
    const std::size_t k = todo.back();
    todo.pop_back();
    if (seen[k]) continue;
    seen[k] = true;
    if (stop(k)) continue;
    for (std::size_t s : g.next[k]) todo.push_back(s);
  }
  return seen;
}

// The phase parity a wait names (its last operand, a register holding it in bit 31), where the
// instructions just before it build it from constants: SHF.L.U32 Rp, RZ|Rq, 0x1f, RZ with Rq a moved
// immediate, or Rp a moved immediate itself. -1: not a constant there (a later lap's phase, say).
int constant_parity(const Graph& g, std::size_t wait, const std::vector<bool>& joins) {
  const std::string& ops = g.insns[wait].operands;
  const auto trimmed = [](std::string t) {
    t.erase(0, t.find_first_not_of(' '));
    t.erase(t.find_last_not_of(' ') + 1);
    return t;
  };
  const std::string reg = trimmed(ops.substr(ops.rfind(',') + 1));
  if (reg == "RZ") return 0;
  static const std::regex shift(R"(^\s*(R\d+),\s*(RZ|R\d+),\s*0x1f,\s*RZ\s*$)");
  // (at most 32 bits' worth of digits: a longer number in a foreign text is no parity, not a throw)
  static const std::regex moved(R"(^\s*(R\d+),\s*(?:RZ,\s*RZ,\s*)?(-?0x[0-9a-fA-F]{1,8}|\d{1,10})\s*$)");
  // The def of `r` in the straight line before `from`: every path into `from` passes it (nothing
  // enters the line between), no branch leaves it, and the def is not predicated. A 64-bit def of the
  // register below `r` (R(n-1) of a pair) writes `r` too and reads as no constant.
  static const std::regex numbered(R"(^R([1-9]\d{0,3})$)");
  const auto below = [](const std::string& r) {
    std::smatch q;
    return std::regex_match(r, q, numbered) ? "R" + std::to_string(std::stoi(q[1]) - 1) : std::string();
  };
  auto def_of = [&](const std::string& r, std::size_t from) -> std::ptrdiff_t {
    for (std::size_t k = from; k-- > 0 && from - k <= 24;) {
      if (joins[k + 1]) return -1;
      const Insn& i = g.insns[k];
      if (g.kinds[k] == Kind::branch || g.kinds[k] == Kind::jump_table || g.kinds[k] == Kind::exit) return -1;
      const std::string dest = trimmed(i.operands.substr(0, i.operands.find(',')));
      if (dest == r) return i.guarded ? -1 : static_cast<std::ptrdiff_t>(k);
      if (dest == below(r) && (i.op.find("WIDE") != std::string::npos || i.op.find("64") != std::string::npos))
        return -1;
    }
    return -1;
  };
  auto immediate = [](const std::string& v) { return std::stoll(v, nullptr, 0); };
  std::smatch m;
  const std::ptrdiff_t d = def_of(reg, wait);
  if (d < 0) return -1;
  const Insn& i = g.insns[static_cast<std::size_t>(d)];
  if (i.op == "SHF.L.U32" && std::regex_search(i.operands, m, shift)) {
    if (m[2] == "RZ") return 0;
    const std::ptrdiff_t d2 = def_of(m[2], static_cast<std::size_t>(d));
    if (d2 < 0) return -1;
    const Insn& j = g.insns[static_cast<std::size_t>(d2)];
    std::smatch n;
    if ((j.op == "IMAD.MOV.U32" || j.op == "MOV") && std::regex_search(j.operands, n, moved))
      return static_cast<int>(immediate(n[2]) & 1);
    return -1;
  }
  if ((i.op == "IMAD.MOV.U32" || i.op == "MOV") && std::regex_search(i.operands, m, moved))
    return static_cast<int>((static_cast<std::uint64_t>(immediate(m[2])) >> 31) & 1);
  return -1;
}

void check_function(const std::string& name, const Graph& g, ProtocolReport* r) {
  const std::size_t n = g.insns.size();
  std::set<std::size_t> released_early;
  for (std::size_t k = 0; k < n; ++k) {
    switch (g.kinds[k]) {
      case Kind::wgmma: ++r->wgmmas; break;
      case Kind::arrive: ++r->arrivals; break;
      case Kind::wait: ++r->waits; break;
      case Kind::copy: ++r->copies; break;
      case Kind::fence: ++r->fences; break;
      default: break;
    }
  }
  // release: from each wgmma, an arrival reached before a covering wait or another wgmma.
  for (std::size_t h = 0; h < n; ++h) {
    if (g.kinds[h] != Kind::wgmma) continue;
    const std::vector<bool> seen = reach(g, h, [&](std::size_t k) {
      return g.kinds[k] == Kind::wgmma || g.kinds[k] == Kind::wgmma_wait_all || g.kinds[k] == Kind::arrive;
    });
    for (std::size_t a = 0; a < n; ++a)
      if (seen[a] && g.kinds[a] == Kind::arrive && released_early.insert(a).second)
        r->findings.push_back({name, "release",
                               "the barrier arrival at " + hex(g.insns[a].addr) + " (" + g.insns[a].op +
                                   ") follows the wgmma at " + hex(g.insns[h].addr) +
                                   " on a path with no wgmma.wait_group 0 (WARPGROUP.DEPBAR.LE gsb0, 0x0) between"});
  }
  // slot: from each arrival, a shared-memory load or store that paths from it reach before any
  // barrier wait and that no path from it reaches through one. A thread's arrival releases what it
  // read or wrote (a stage, a hand-over slot) to the barrier's other side; shared memory it then
  // touches with no wait on any path between is touched while the other side may own it (a slot
  // read after its release, a slot written before its release is waited for). A wait some paths
  // skip (a ring's first lap waits for nothing) is a wait: the rule, like refill, is existential.
  // The arrivals held are releases, an arrive of one with no transaction count (.A1T0,
  // mbarrier.arrive, PTX ISA 9.7.13.15.13); a producer's arrive.expect_tx announces the bytes a copy
  // brings and releases nothing the thread touched.
  std::set<std::size_t> touched_after_release;
  for (std::size_t a = 0; a < n; ++a) {
    if (g.kinds[a] != Kind::arrive || g.insns[a].op.find(".A1T0") == std::string::npos) continue;
    auto stop_at_arrive = [&](std::size_t k) { return g.kinds[k] == Kind::arrive; };
    const std::vector<bool> bare = reach(g, a, [&](std::size_t k) {
      return g.kinds[k] == Kind::wait || g.kinds[k] == Kind::arrive;
    });
    std::vector<bool> waited(n, false);
    for (std::size_t w = 0; w < n; ++w) {
      if (!bare[w] || g.kinds[w] != Kind::wait) continue;
      const std::vector<bool> after = reach(g, w, stop_at_arrive);
      for (std::size_t k = 0; k < n; ++k) waited[k] = waited[k] || after[k];
    }
    for (std::size_t x = 0; x < n; ++x)
      if (bare[x] && !waited[x] && (g.kinds[x] == Kind::smem_read || g.kinds[x] == Kind::smem_write) &&
          touched_after_release.insert(x).second)
        r->findings.push_back({name, "slot",
                               "the shared-memory " + std::string(g.kinds[x] == Kind::smem_read ? "load" : "store") +
                                   " at " + hex(g.insns[x].addr) + " (" + g.insns[x].op +
                                   ") follows the barrier arrival at " + hex(g.insns[a].addr) +
                                   " with no barrier wait (SYNCS.PHASECHK ... TRYWAIT) on any path between: it "
                                   "touches what that arrival released"});
  }
  // phase: a wait that can be the first of its thread (no wait before it on some path from the
  // entry) and names parity 1, a phase no barrier has completed yet.
  std::vector<bool> joins(n, false);  // instructions more than one edge enters, or a branch's target
  {
    std::vector<int> in(n, 0);
    for (std::size_t k = 0; k < n; ++k)
      for (std::size_t s : g.next[k]) in[s] += s == k + 1 ? 1 : 2;
    for (std::size_t k = 0; k < n; ++k) joins[k] = in[k] > 1;
  }
  std::vector<bool> first(n, false);
  if (n != 0) {
    std::vector<bool> seen(n, false);
    std::vector<std::size_t> todo{0};
    while (!todo.empty()) {
      const std::size_t k = todo.back();
      todo.pop_back();
      if (seen[k]) continue;
      seen[k] = true;
      if (g.kinds[k] == Kind::wait) {
        first[k] = true;
        continue;
      }
      for (std::size_t s : g.next[k]) todo.push_back(s);
    }
  }
  for (std::size_t w = 0; w < n; ++w) {
    if (!first[w]) continue;
    // A wait some path leaves for an asynchronous copy before any other wait is a producer's acquire
    // of a free stage: a wait on the phase before (parity 1) passes it at once by design, the start
    // state CUTLASS's producers keep (PTX ISA 9.7.13.15.16). The rule holds the waits that guard
    // reads.
    const std::vector<bool> until_next = reach(g, w, [&](std::size_t k) { return g.kinds[k] == Kind::wait; });
    bool acquire = false;
    for (std::size_t c = 0; c < n && !acquire; ++c) acquire = until_next[c] && g.kinds[c] == Kind::copy;
    if (acquire) continue;
    ++r->first_waits;
    const int parity = constant_parity(g, w, joins);
    if (parity < 0) continue;
    ++r->first_waits_read;
    if (parity == 1)
      r->findings.push_back({name, "phase",
                             "the barrier wait at " + hex(g.insns[w].addr) + " (" + g.insns[w].op +
                                 ") can be its thread's first and names phase parity 1: a barrier starts in "
                                 "phase 0, so the wait returns at once, before anything arrived"});
  }
  // refill: a copy that no barrier wait reaches on any path refills a stage nobody released.
  std::vector<bool> after_a_wait(n, false);
  for (std::size_t w = 0; w < n; ++w) {
    if (g.kinds[w] != Kind::wait) continue;
    const std::vector<bool> seen = reach(g, w, [](std::size_t) { return false; });
    for (std::size_t c = 0; c < n; ++c) after_a_wait[c] = after_a_wait[c] || seen[c];
  }
  for (std::size_t c = 0; c < n; ++c)
    if (g.kinds[c] == Kind::copy && !after_a_wait[c])
      r->findings.push_back({name, "refill",
                             "the copy at " + hex(g.insns[c].addr) + " (" + g.insns[c].op +
                                 ") refills shared memory with no barrier wait (SYNCS.PHASECHK ... TRYWAIT) before it "
                                 "on any path: nothing waits for the stage's release"});
  // fence: from each wait, the copies it reaches, against those it reaches through a proxy fence.
  std::set<std::size_t> unfenced;
  for (std::size_t w = 0; w < n; ++w) {
    if (g.kinds[w] != Kind::wait) continue;
    const std::vector<bool> seen = reach(g, w, [](std::size_t) { return false; });
    std::vector<bool> fenced(n, false);
    for (std::size_t f = 0; f < n; ++f) {
      if (!seen[f] || g.kinds[f] != Kind::fence) continue;
      const std::vector<bool> after = reach(g, f, [](std::size_t) { return false; });
      for (std::size_t c = 0; c < n; ++c) fenced[c] = fenced[c] || after[c];
    }
    for (std::size_t c = 0; c < n; ++c)
      if (seen[c] && g.kinds[c] == Kind::copy && !fenced[c] && unfenced.insert(c).second)
        r->findings.push_back({name, "fence",
                               "the copy at " + hex(g.insns[c].addr) + " (" + g.insns[c].op +
                                   ") refills shared memory after the barrier wait at " + hex(g.insns[w].addr) +
                                   " with no proxy fence (FENCE.VIEW.ASYNC.S) on any path between"});
  }
}

// The cp.async rules, over a symbol that stages shared memory with cp.async (the mma.sync bodies):
//   barrier  a copy (LDGSTS) that a shared-memory read reaches across a back edge of a loop holding
//            the read, on a path with no CTA barrier: the next lap refills a stage before the
//            barrier that ends every warp's reads of it in this lap (a WAR hazard no output of one
//            GPU's timing may show). Paths inside one lap are not held (a lap reads one stage and
//            refills another that the lap's barrier released).
//   depth    a cp.async.wait_group N in a loop that commits one group a lap, where N is not below
//            the groups committed on every path before the loop (plus those committed before the
//            wait in the lap): the wait leaves pending the group the lap is about to read.
// Loops are read from back edges (a branch to an address at or before its own); a lap that commits
// other than one group on every path, and code the edges do not show, are not held: the report
// counts the waits whose depth was read.
void check_async_function(const std::string& name, const Graph& g, ProtocolReport* r) {
  const std::size_t n = g.insns.size();
  std::vector<std::pair<std::size_t, std::size_t>> back;  // (from, to) with to <= from
  for (std::size_t k = 0; k < n; ++k) {
    switch (g.kinds[k]) {
      case Kind::async_copy: ++r->async_copies; break;
      case Kind::async_commit: ++r->async_commits; break;
      case Kind::async_wait: ++r->async_waits; break;
      case Kind::cta_barrier: ++r->cta_barriers; break;
      default: break;
    }
    for (std::size_t s : g.next[k])
      if (s <= k) back.push_back({k, s});
  }
  // The predecessors, for each loop's body: the nodes that reach its back edge's source without
  // passing its head.
  std::vector<std::vector<std::size_t>> prev(n);
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t s : g.next[k]) prev[s].push_back(k);
  std::vector<std::vector<bool>> body(back.size(), std::vector<bool>(n, false));
  for (std::size_t e = 0; e < back.size(); ++e) {
    const auto [from, head] = back[e];
    std::vector<bool>& in = body[e];
    in[head] = true;
    std::vector<std::size_t> todo{from};
    while (!todo.empty()) {
      const std::size_t k = todo.back();
      todo.pop_back();
      if (in[k]) continue;
      in[k] = true;
      for (std::size_t p : prev[k]) todo.push_back(p);
    }
  }
  // barrier: from each read, the copies reached across a back edge of a loop that holds the read.
  std::set<std::size_t> flagged;
  for (std::size_t rd = 0; rd < n; ++rd) {
    if (g.kinds[rd] != Kind::smem_read) continue;
    std::set<std::pair<std::size_t, std::size_t>> own;  // the back edges of loops holding the read
    for (std::size_t e = 0; e < back.size(); ++e)
      if (body[e][rd]) own.insert(back[e]);
    if (own.empty()) continue;
    std::vector<bool> seen(2 * n, false);  // (node, crossed)
    std::vector<std::pair<std::size_t, bool>> todo;
    for (std::size_t s : g.next[rd]) todo.push_back({s, own.count({rd, s}) > 0});
    while (!todo.empty()) {
      const auto [k, crossed] = todo.back();
      todo.pop_back();
      if (seen[2 * k + crossed]) continue;
      seen[2 * k + crossed] = true;
      if (g.kinds[k] == Kind::cta_barrier) continue;
      if (crossed && g.kinds[k] == Kind::async_copy && flagged.insert(k).second)
        r->findings.push_back({name, "barrier",
                               "the cp.async copy at " + hex(g.insns[k].addr) + " (" + g.insns[k].op +
                                   ") is reached from the shared-memory read at " + hex(g.insns[rd].addr) + " (" +
                                   g.insns[rd].op +
                                   ") across the loop's back edge with no CTA barrier (BAR.SYNC) between: the next "
                                   "lap refills shared memory before every warp is past this lap's reads"});
      for (std::size_t s : g.next[k]) todo.push_back({s, crossed || own.count({k, s}) > 0});
    }
  }
  // depth: per loop head, the fewest commits on a forward path from the entry.
  constexpr std::size_t kUnknown = static_cast<std::size_t>(-1);
  // The fewest (or most) commits on a path from `from` to `to` over forward edges (address order).
  auto commits = [&](std::size_t from, std::size_t to, bool most) {
    std::vector<std::size_t> best(n, kUnknown);
    best[from] = g.kinds[from] == Kind::async_commit ? 1 : 0;
    for (std::size_t k = from; k < n && k <= to; ++k) {
      if (best[k] == kUnknown) continue;
      for (std::size_t s : g.next[k]) {
        if (s <= k) continue;
        const std::size_t c = best[k] + (g.kinds[s] == Kind::async_commit ? 1 : 0);
        if (best[s] == kUnknown || (most ? c > best[s] : c < best[s])) best[s] = c;
      }
    }
    return best[to];
  };
  auto fewest_commits = [&](std::size_t from, std::size_t to) { return commits(from, to, false); };
  static const std::regex depth_re(R"(SB0,\s*(0x[0-9a-fA-F]{1,8}|\d{1,9}))");
  std::set<std::size_t> depth_flagged;
  for (std::size_t e = 0; e < back.size(); ++e) {
    const auto [from, head] = back[e];
    // One group a lap on every path through the body.
    if (commits(head, from, false) != 1 || commits(head, from, true) != 1) continue;
    const std::size_t before = fewest_commits(0, head) - (g.kinds[head] == Kind::async_commit ? 1 : 0);
    if (before == kUnknown || before == 0) continue;
    bool copies = false;
    for (std::size_t k = head; k <= from; ++k) copies = copies || (body[e][k] && g.kinds[k] == Kind::async_copy);
    if (!copies) continue;
    for (std::size_t w = head; w <= from; ++w) {
      if (!body[e][w] || g.kinds[w] != Kind::async_wait) continue;
      std::smatch m;
      if (!std::regex_search(g.insns[w].operands, m, depth_re)) continue;
      ++r->async_waits_read;
      const std::size_t depth = static_cast<std::size_t>(std::stoull(m[1].str(), nullptr, 0));
      const std::size_t in_lap = fewest_commits(head, w) - (g.kinds[w] == Kind::async_commit ? 1 : 0);
      if (depth + 1 > before + in_lap && depth_flagged.insert(w).second)
        r->findings.push_back({name, "depth",
                               "the cp.async.wait_group at " + hex(g.insns[w].addr) + " (DEPBAR.LE SB0, " +
                                   std::to_string(depth) + ") leaves " + std::to_string(depth) +
                                   " groups pending in a loop that commits one a lap after " + std::to_string(before) +
                                   " before it" + (in_lap ? " and " + std::to_string(in_lap) + " in the lap" : "") +
                                   ": the group the lap reads may still be in flight (at most " +
                                   std::to_string(before + in_lap - 1) + " may be pending)"});
    }
  }
}

}  // namespace

ProtocolReport check_protocol_sass(const std::string& sass) {
  ProtocolReport r;
  const auto functions = parse_sass(sass);
  // What cannot be read is no check at all: nothing of the module is claimed.
  auto refuse = [&](const std::string& why) {
    r.why_not = why;
    r.findings.clear();
    r.kernels.clear();
    r.async_kernels.clear();
    return r;
  };
  // Every family symbol in the text: the Hopper tier's (tma) under the pipeline's rules, the others
  // (the mma.sync bodies, where they stage with cp.async) under the cp.async rules.
  for (device::KernelId id : device::kAllKernels) {
    const std::string name = device::kernel_name(id);
    const auto f = functions.find(name);
    if (f == functions.end()) continue;
    Graph g;
    std::string why;
    if (f->second.empty() || !build_graph(f->second, &g, &why))
      return refuse(name + ": " + (why.empty() ? "no instruction could be read" : why));
    if (device::kernel_uses_tma(id)) {
      const std::size_t wgmmas_before = r.wgmmas;
      check_function(name, g, &r);
      if (r.wgmmas == wgmmas_before)
        return refuse(name + ": no wgmma (HGMMA) in its SASS: not the pipeline these rules describe");
      r.kernels.push_back(name);
    } else {
      const std::size_t copies_before = r.async_copies;
      check_async_function(name, g, &r);
      if (r.async_copies != copies_before) r.async_kernels.push_back(name);
    }
  }
  if (r.kernels.empty() && r.async_kernels.empty())
    return refuse("the module has no pipelined symbol of the family (the Hopper tier's or the cp.async bodies')");
  r.checked = true;
  return r;
}

ProtocolReport check_module_protocol(const std::string& module_path) {
  ProtocolReport none;
  std::string looked;
  const std::string tool = find_cuda_tool("cuobjdump", {}, &looked);
  if (tool.empty()) {
    none.why_not = looked + " (the CUDA toolkit's)";
    return none;
  }
  const ToolRun run = run_tool({tool, "-sass", module_path}, 0, false);
  if (!run.started || run.exit_code != 0) {
    none.tool = tool;
    none.why_not = tool + " -sass could not read the module";
    return none;
  }
  ProtocolReport r = check_protocol_sass(run.output);
  r.tool = tool;
  return r;
}

std::string protocol_text(const ProtocolReport& r) {
  std::string s = "protocol (the pipelined symbols' SASS";
  s += r.tool.empty() ? "" : ", " + r.tool;
  s += "): ";
  if (!r.checked) return s + "NOT CHECKED: " + r.why_not + "\n";
  s += std::to_string(r.kernels.size()) + " symbols, " + std::to_string(r.wgmmas) + " wgmmas, " +
       std::to_string(r.arrivals) + " barrier arrivals, " + std::to_string(r.waits) + " waits, " +
       std::to_string(r.copies) + " copies, " + std::to_string(r.fences) + " proxy fences, " +
       std::to_string(r.first_waits_read) + " of " + std::to_string(r.first_waits) + " first waits' phases read: " +
       (r.findings.empty() ? "no finding" : std::to_string(r.findings.size()) + " findings") + "\n";
  s += "protocol (the cp.async symbols): " + std::to_string(r.async_kernels.size()) + " symbols, " +
       std::to_string(r.async_copies) + " copies, " + std::to_string(r.async_commits) + " commits, " +
       std::to_string(r.async_waits) + " waits (" + std::to_string(r.async_waits_read) + " depths read), " +
       std::to_string(r.cta_barriers) + " CTA barriers\n";
  for (const ProtocolFinding& f : r.findings) s += "  FAIL " + f.kernel + " [" + f.rule + "]: " + f.what + "\n";
  return s;
}

}  // namespace w8a16::props
