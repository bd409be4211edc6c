// SPDX-License-Identifier: MIT OR Apache-2.0
// The static protocol check of a module's pipelined symbols (the Hopper tier: bodies.def's `tma`
// rows), read from their SASS (cuobjdump -sass, from the CUDA toolkit) without running anything.
// Each symbol's instructions become a control-flow graph (branches, predicated exits, jump tables
// as edges to every block that nothing falls into), and five rules are held on it:
//   release  a barrier arrival (SYNCS.ARRIVE: a stage's or a hand-over slot's release, PTX ISA
//            9.7.13.15.13) that some path reaches from a wgmma (HGMMA, PTX ISA 9.7.15.5) with no
//            wait covering it (WARPGROUP.DEPBAR.LE gsb0, 0x0: wgmma.wait_group 0, 9.7.15.7) and no
//            later wgmma between: the release lets the producer overwrite what the wgmma may still
//            be reading;
//   fence    an asynchronous copy into shared memory (UTMALDG, UBLKCP: cp.async.bulk, 9.7.9.25)
//            reachable from a barrier wait (SYNCS.PHASECHK ... TRYWAIT) on no path through a proxy
//            fence (FENCE.VIEW.ASYNC.S: fence.proxy.async, 9.7.13.4): the wait orders the readers'
//            generic-proxy accesses before this thread's, and without the fence not before the
//            async proxy's writes;
//   refill   an asynchronous copy that no barrier wait reaches on any path: nothing waits for the
//            release of the stage it overwrites;
//   slot     a shared-memory load or store (LDS, STS) that paths from a release (an arrive of one
//            with no transaction count, SYNCS.ARRIVE ... A1T0) reach before any barrier wait, and
//            that no path from it reaches through one: the thread touches what it released (a
//            hand-over slot read after its release, or written before its release is waited for).
//            A wait some paths skip (a ring's first lap) counts, as for refill;
//   phase    a barrier wait that some path from the entry reaches before any other wait (the
//            thread's first) and names phase parity 1: an mbarrier starts in phase 0 (9.7.13.15.9,
//            mbarrier.init), and a wait for parity 1 then returns at once, as though the phase before
//            had completed (9.7.13.15.16), before anything arrived. A wait that some path leaves
//            for an asynchronous copy before any other wait is a producer's acquire of a free
//            stage, which that wait passes by design (CUTLASS's producer start state): not held.
// The fence and refill rules are existential (a copy some path fences, or some wait reaches, passes:
// the first lap's refills wait for nothing, on paths the SASS cannot tell from the others'), so they
// flag a refill no path fences or waits for, not one that most paths do. The phase rule reads a
// wait's parity only where the instructions just before it build it from constants (a first lap
// the compiler peeled); a parity computed from the ring's count (a later lap's) is a register value
// it does not follow, and the report counts the first waits it could read: `verify --perturb` is what
// shows a wrong phase there. A jump table's edges to every block nothing falls into make more waits
// "first" than any thread meets first; a later lap's wait on a constant parity 1 behind one would be
// a false finding (the product and perturbed modules have none).
//
// The symbols that stage shared memory with cp.async (the mma.sync bodies: the tiles, the twins,
// the row-tile stream) are held to two more rules (check_async_function in the source):
//   barrier  a cp.async copy (LDGSTS, PTX ISA 9.7.9.25) that a shared-memory read (LDS, LDSM)
//            reaches across the back edge of a loop holding the read, on a path with no CTA
//            barrier (BAR.SYNC, 9.7.13.1): the next lap refills a stage before every warp is past
//            this lap's reads. Paths inside one lap are not held (a lap reads one stage and
//            refills the one its barrier released).
//   depth    a cp.async.wait_group N (DEPBAR.LE SB0, N) in a loop that commits one group a lap
//            (LDGDEPBAR) with N not below the groups committed on every path before the loop (plus
//            the lap's own before the wait): the group the lap reads may still be in flight.
// Loops are read from back edges; a lap committing other than one group on every path is not held,
// and the report counts the waits whose depth was read. Instructions on @!PT (never executed) are
// not read.
#pragma once
#include <string>
#include <vector>

namespace w8a16::props {

struct ProtocolFinding {
  std::string kernel;  // the symbol
  std::string rule;    // "release", "fence", "refill", "phase"; "barrier", "depth" (cp.async)
  std::string what;    // the instructions and their addresses
};

struct ProtocolReport {
  bool checked = false;              // every pipelined symbol of the module was read and analysed
  std::string why_not;               // when not: what could not be read
  std::string tool;                  // the disassembler that was run
  std::vector<std::string> kernels;  // the symbols checked
  std::size_t wgmmas = 0, arrivals = 0, waits = 0, copies = 0, fences = 0;  // instructions seen, over all
  // Waits that can be a thread's first (a producer's acquire, which a copy follows, left out); of
  // those, the ones whose phase was read.
  std::size_t first_waits = 0, first_waits_read = 0;
  // The cp.async symbols (the mma.sync bodies) and what the cp.async rules saw in them.
  std::vector<std::string> async_kernels;
  std::size_t async_copies = 0, async_commits = 0, async_waits = 0, async_waits_read = 0, cta_barriers = 0;
  std::vector<ProtocolFinding> findings;
  bool pass() const { return checked && findings.empty(); }
};

// The rules over cuobjdump -sass text: every function whose name is a pipelined symbol of the
// family. A text with none of them is checked = false, saying so.
ProtocolReport check_protocol_sass(const std::string& sass);

// cuobjdump -sass over the module file (a fatbin or cubin): the one found on PATH, else under
// $CUDA_HOME/bin or /usr/local/cuda/bin; without one, checked = false naming where it looked.
ProtocolReport check_module_protocol(const std::string& module_path);

// One line for the run's report, and one per finding.
std::string protocol_text(const ProtocolReport& r);

}  // namespace w8a16::props
