// SPDX-License-Identifier: MIT OR Apache-2.0
// The static protocol check (properties/protocol_check.hpp) over SASS text written out here in
// cuobjdump's layout: each rule caught where it is broken, nothing found where it is kept, and every
// text it cannot read said so rather than passed. The check of real modules (the product's, the
// perturbed one and the ordering mutants) is the GPU runs' and tools/gpu-mutants' (docs/JOURNAL.md).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "w8a16/properties/protocol_check.hpp"

namespace {

using w8a16::props::check_protocol_sass;
using w8a16::props::protocol_text;
using w8a16::props::ProtocolReport;

std::string insn(unsigned addr, const std::string& text) {
  char a[32];
  std::snprintf(a, sizeof a, "        /*%04x*/", addr);
  return std::string(a) + "                   " + text + " ;  /* 0x000fe40000000f00 */\n";
}

// A producer (wait for the stage's release, expect its bytes, fence unless in the first lap, copy)
// and a consumer (wait for the stage, wgmmas, wait for them, release), as the Hopper tier's.
struct Sass {
  std::string release_part = insn(0x0140, "WARPGROUP.DEPBAR.LE gsb0, 0x0") +
                             insn(0x0150, "SYNCS.ARRIVE.TRANS64.A1T0 RZ, [UR5+0x30040], RZ");
  std::string fence = "FENCE.VIEW.ASYNC.S";
  std::string name = "w8a16_wgmma_rows_n128";
  std::string text() const {
    return "Fatbin elf code:\n================\narch = sm_90a\n\n\t\tFunction : " + name + "\n" +
           insn(0x0000, "ISETP.NE.AND P0, PT, R0, RZ, PT") + insn(0x0010, "@P0 BRA 0x0100") +
           // the producer
           insn(0x0020, "SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR6+0x30040], R10") + insn(0x0030, "@!P1 BRA 0x0200") +
           insn(0x0040, "SYNCS.ARRIVE.TRANS64 RZ, [R16+UR9+0x30000], R15") + insn(0x0050, "@!P2 BRA 0x0070") +
           insn(0x0060, fence) + insn(0x0070, "UTMALDG.2D [UR8], [UR6]") + insn(0x0080, "@P3 BRA 0x0020") +
           insn(0x0090, "EXIT") +
           // the consumer
           insn(0x0100, "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR6+0x30000], R18") + insn(0x0110, "@!P0 BRA 0x0210") +
           insn(0x0120, "HGMMA.64x32x16.F32.BF16 R24, R68, gdesc[UR8], RZ, !UPT") +
           insn(0x0130, "HGMMA.64x32x16.F32.BF16 R24, R64, gdesc[UR8], R24, gsb0") + release_part +
           insn(0x0160, "@P4 BRA 0x0100") + insn(0x0170, "EXIT") +
           // the waits' retries, out of line
           insn(0x0200, "BRA 0x0020") + insn(0x0210, "BRA 0x0100");
  }
};

TEST(ProtocolCheck, APipelineThatKeepsBothRulesHasNoFinding) {
  const ProtocolReport r = check_protocol_sass(Sass{}.text());
  ASSERT_TRUE(r.checked) << r.why_not;
  EXPECT_TRUE(r.pass());
  EXPECT_EQ(r.kernels, std::vector<std::string>{"w8a16_wgmma_rows_n128"});
  EXPECT_EQ(r.wgmmas, 2u);
  EXPECT_EQ(r.arrivals, 2u);
  EXPECT_EQ(r.waits, 2u);
  EXPECT_EQ(r.copies, 1u);
  EXPECT_EQ(r.fences, 1u);
}

TEST(ProtocolCheck, AReleaseBeforeTheWgmmasWaitIsAFindingNamingBoth) {
  Sass s;
  s.release_part = insn(0x0140, "SYNCS.ARRIVE.TRANS64.A1T0 RZ, [UR5+0x30040], RZ") +
                   insn(0x0150, "WARPGROUP.DEPBAR.LE gsb0, 0x0");
  const ProtocolReport r = check_protocol_sass(s.text());
  ASSERT_TRUE(r.checked) << r.why_not;
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].rule, "release");
  EXPECT_NE(r.findings[0].what.find("0x140"), std::string::npos) << r.findings[0].what;
  EXPECT_NE(r.findings[0].what.find("0x130"), std::string::npos) << r.findings[0].what;
  // A wait that covers only some groups (gsb0, 0x1) or holds only where its predicate does is no cover.
  for (const std::string& wait : {"WARPGROUP.DEPBAR.LE gsb0, 0x1", "@P5 WARPGROUP.DEPBAR.LE gsb0, 0x0"}) {
    s.release_part = insn(0x0140, wait) + insn(0x0150, "SYNCS.ARRIVE.TRANS64.A1T0 RZ, [UR5+0x30040], RZ");
    EXPECT_EQ(check_protocol_sass(s.text()).findings.size(), 1u) << wait;
  }
}

TEST(ProtocolCheck, ARefillNoPathFencesIsAFinding) {
  Sass s;
  s.fence = "NOP";
  const ProtocolReport r = check_protocol_sass(s.text());
  ASSERT_TRUE(r.checked) << r.why_not;
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].rule, "fence");
  EXPECT_NE(r.findings[0].what.find("0x70"), std::string::npos) << r.findings[0].what;
  s.fence = "@P6 FENCE.VIEW.ASYNC.S";  // a fence that may not execute fences nothing for sure
  EXPECT_EQ(check_protocol_sass(s.text()).findings.size(), 1u);
}

TEST(ProtocolCheck, ARefillNoWaitReachesIsAFinding) {
  // The producer's wait for the stage's release taken out: its copy follows no wait on any path.
  Sass s;
  std::string text = s.text();
  text.replace(text.find("SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR6+0x30040], R10"), 52,
               "ISETP.NE.AND P1, PT, R10, RZ, PT");
  const ProtocolReport r = check_protocol_sass(text);
  ASSERT_TRUE(r.checked) << r.why_not;
  ASSERT_EQ(r.findings.size(), 1u);  // the fence rule holds copies a wait reaches: none here
  EXPECT_EQ(r.findings[0].rule, "refill");
  EXPECT_NE(r.findings[0].what.find("0x70"), std::string::npos) << r.findings[0].what;
}

// A consumer whose first wait's parity is built from constants just before it (a first lap the
// compiler peeled), then a second wait (the next lap's) that names parity 1 as it should; the
// producer's wait names a register the lines before it do not build.
std::string first_wait_sass(const std::string& parity_a, const std::string& parity_b,
                            const std::string& to_consumer = "@P0 BRA 0x0100") {
  return "\t\tFunction : w8a16_wgmma_rows_n128\n" + insn(0x0000, "ISETP.NE.AND P0, PT, R0, RZ, PT") +
         insn(0x0010, to_consumer) + insn(0x0020, "SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR6+0x30040], R10") +
         insn(0x0030, "@!P1 BRA 0x0020") + insn(0x0040, "FENCE.VIEW.ASYNC.S") +
         insn(0x0050, "UTMALDG.2D [UR8], [UR6]") + insn(0x0060, "EXIT") + insn(0x0100, parity_a) +
         insn(0x0110, parity_b) + insn(0x0120, "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR6+0x30000], R18") +
         insn(0x0130, "@!P0 BRA 0x0200") + insn(0x0140, "HGMMA.64x32x16.F32.BF16 R24, R68, gdesc[UR8], RZ, gsb0") +
         insn(0x0150, "WARPGROUP.DEPBAR.LE gsb0, 0x0") +
         insn(0x0160, "SYNCS.ARRIVE.TRANS64.A1T0 RZ, [UR5+0x30040], RZ") +
         insn(0x0170, "IMAD.MOV.U32 R3, RZ, RZ, 0x1") + insn(0x0180, "SHF.L.U32 R19, R3, 0x1f, RZ") +
         insn(0x0190, "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR6+0x30008], R19") + insn(0x01a0, "EXIT") +
         // the first wait's retry, out of line: a wait of its own, not a first one
         insn(0x0200, "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR6+0x30000], R18") + insn(0x0210, "@!P0 BRA 0x0200") +
         insn(0x0220, "BRA 0x0140");
}

TEST(ProtocolCheck, AFirstWaitOnPhaseOneIsAFindingAndPhaseZeroIsNot) {
  // Parity 0, three ways: shifted from RZ, a moved value whose bit 31 is clear, RZ itself.
  for (const auto& [a, b] :
       std::vector<std::pair<std::string, std::string>>{{"NOP", "SHF.L.U32 R18, RZ, 0x1f, RZ"},
                                                        {"IMAD.MOV.U32 R3, RZ, RZ, 0x2", "SHF.L.U32 R18, R3, 0x1f, RZ"},
                                                        {"NOP", "MOV R18, 0x1"}}) {
    const ProtocolReport r = check_protocol_sass(first_wait_sass(a, b));
    ASSERT_TRUE(r.checked) << r.why_not;
    EXPECT_TRUE(r.pass()) << b;
    EXPECT_EQ(r.first_waits, 1u);  // the consumer's; not the producer's acquire, the retry or the next lap's
    EXPECT_EQ(r.first_waits_read, 1u) << b;
  }
  std::string rz = first_wait_sass("NOP", "NOP");
  rz.replace(rz.find("[UR6+0x30000], R18"), 18, "[UR6+0x30000], RZ");
  EXPECT_TRUE(check_protocol_sass(rz).pass());
  EXPECT_EQ(check_protocol_sass(rz).first_waits_read, 1u);
  // Parity 1: a moved 1 shifted into bit 31, or bit 31 moved directly.
  for (const auto& [a, b] : std::vector<std::pair<std::string, std::string>>{
           {"IMAD.MOV.U32 R3, RZ, RZ, 0x1", "SHF.L.U32 R18, R3, 0x1f, RZ"}, {"NOP", "MOV R18, 0x80000000"}}) {
    const ProtocolReport r = check_protocol_sass(first_wait_sass(a, b));
    ASSERT_TRUE(r.checked) << r.why_not;
    ASSERT_EQ(r.findings.size(), 1u) << b;
    EXPECT_EQ(r.findings[0].rule, "phase");
    EXPECT_NE(r.findings[0].what.find("0x120"), std::string::npos) << r.findings[0].what;
  }
}

TEST(ProtocolCheck, APhaseTheLinesBeforeTheWaitDoNotFixIsNotRead) {
  const std::string one = "IMAD.MOV.U32 R3, RZ, RZ, 0x1", shift = "SHF.L.U32 R18, R3, 0x1f, RZ";
  // A computed parity, a predicated def, a def another path jumps past, the high half of a 64-bit
  // def, an immediate wider than a register: none is read as a constant, and none is a finding.
  for (const std::string& text :
       {first_wait_sass(one, "LOP3.LUT R18, R20, 0x80000000, RZ, 0xc0, !PT"),
        first_wait_sass("@P2 IMAD.MOV.U32 R3, RZ, RZ, 0x1", shift), first_wait_sass(one, shift, "@P0 BRA 0x0110"),
        first_wait_sass(one, "IMAD.WIDE.U32 R17, R4, R5, RZ"),
        // numbers wider than 32 bits, as a foreign or damaged text might hold: no parity, no throw
        first_wait_sass("NOP", "MOV R18, 0x123456789abcdef0123"),
        first_wait_sass("NOP", "MOV R18, 99999999999999999999")}) {
    const ProtocolReport r = check_protocol_sass(text);
    ASSERT_TRUE(r.checked) << r.why_not;
    EXPECT_TRUE(r.pass());
    EXPECT_EQ(r.first_waits_read, 0u);
  }
  // The report says how many first waits it read.
  EXPECT_NE(protocol_text(check_protocol_sass(first_wait_sass(one, shift))).find("1 of 1 first waits"),
            std::string::npos);
}

TEST(ProtocolCheck, AProducersFirstAcquireOnPhaseOneIsNoFinding) {
  // The producer alone (the consumer's code is reached only through the retries), its first wait for
  // a free stage on the phase before (parity 1, moved just before it; CUTLASS's producer start
  // state): it passes at once by design, and a copy follows it before any other wait.
  std::string text = first_wait_sass("NOP", "SHF.L.U32 R18, RZ, 0x1f, RZ", "MOV R10, 0x80000000");
  text.replace(text.find("@!P1 BRA 0x0020"), 15, "@!P1 BRA 0x0200");
  const ProtocolReport r = check_protocol_sass(text);
  ASSERT_TRUE(r.checked) << r.why_not;
  EXPECT_TRUE(r.pass()) << protocol_text(r);
  EXPECT_EQ(r.first_waits, 0u);  // an acquire is not held to the rule
  // The same wait with a shared-memory read after it instead of the copy guards that read: parity 1
  // there is a finding.
  text.replace(text.find("UTMALDG.2D [UR8], [UR6]"), 23, "LDS.128 R40, [R2]");
  const ProtocolReport read = check_protocol_sass(text);
  ASSERT_TRUE(read.checked) << read.why_not;
  EXPECT_EQ(read.first_waits, 1u);
  EXPECT_EQ(read.first_waits_read, 1u);
  ASSERT_EQ(read.findings.size(), 1u) << protocol_text(read);
  EXPECT_EQ(read.findings[0].rule, "phase");
  EXPECT_NE(read.findings[0].what.find("0x20 "), std::string::npos) << read.findings[0].what;
}

TEST(ProtocolCheck, WhatCannotBeReadIsNotCheckedAndSaysWhy) {
  // No pipelined symbol of the family.
  Sass other;
  other.name = "w8a16_gemm_pipelined";
  ProtocolReport r = check_protocol_sass(other.text());
  EXPECT_FALSE(r.checked);
  EXPECT_FALSE(r.pass());
  EXPECT_NE(r.why_not.find("no pipelined symbol"), std::string::npos) << r.why_not;
  // Not SASS at all.
  r = check_protocol_sass("this is not a disassembly\n");
  EXPECT_FALSE(r.checked);
  // A branch out of the function.
  Sass s;
  std::string text = s.text();
  text.replace(text.find("BRA 0x0210"), 10, "BRA 0x9990");
  r = check_protocol_sass(text);
  EXPECT_FALSE(r.checked);
  EXPECT_NE(r.why_not.find("outside the function"), std::string::npos) << r.why_not;
  // A branch target wider than 64 bits (a damaged text) cannot be read: said so, not thrown.
  text = s.text();
  text.replace(text.find("BRA 0x0210"), 10, "BRA 0x123456789abcdef01234");
  r = check_protocol_sass(text);
  EXPECT_FALSE(r.checked);
  EXPECT_NE(r.why_not.find("cannot be read"), std::string::npos) << r.why_not;
  // A pipelined symbol without a wgmma is not the pipeline the rules describe.
  text = s.text();
  for (std::size_t at; (at = text.find("HGMMA")) != std::string::npos;) text.replace(at, 5, "IMAD.");
  r = check_protocol_sass(text);
  EXPECT_FALSE(r.checked);
  EXPECT_NE(r.why_not.find("no wgmma"), std::string::npos) << r.why_not;
}

TEST(ProtocolCheck, AJumpTableReachesEveryBlockNothingFallsInto) {
  // The dispatch over row tiles is a BRX whose targets are not in the text: a release placed early
  // behind it is still found.
  Sass s;
  s.release_part = insn(0x0140, "SYNCS.ARRIVE.TRANS64.A1T0 RZ, [UR5+0x30040], RZ") +
                   insn(0x0150, "WARPGROUP.DEPBAR.LE gsb0, 0x0");
  std::string text = s.text();
  text.replace(text.find("@P0 BRA 0x0100"), 14, "BRX R2 -0x20");
  const ProtocolReport r = check_protocol_sass(text);
  ASSERT_TRUE(r.checked) << r.why_not;
  EXPECT_EQ(r.findings.size(), 1u);
}

// A cp.async ring as the mma.sync bodies stage it (w8a16_tile_body.cuh): two stages committed
// before the loop; each lap waits for all but the newest group, passes the CTA barrier, refills the
// stage the last lap read, commits, and reads its own stage.
struct AsyncRing {
  std::string wait = "DEPBAR.LE SB0, 0x1";
  std::string lap_start = insn(0x0050, "BAR.SYNC.DEFER_BLOCKING 0x0") +
                          insn(0x0060, "@P0 LDGSTS.E.BYPASS.128 [R1+0x200], desc[UR4][R2.64]");
  std::string text() const {
    return "Fatbin elf code:\n================\narch = sm_90a\n\n\t\tFunction : w8a16_gemm_pipelined\n" +
           insn(0x0000, "LDGSTS.E.BYPASS.128 [R1], desc[UR4][R2.64]") + insn(0x0010, "LDGDEPBAR") +
           insn(0x0020, "LDGSTS.E.BYPASS.128 [R1+0x100], desc[UR4][R2.64]") + insn(0x0030, "LDGDEPBAR") +
           insn(0x0040, wait) + lap_start + insn(0x0070, "LDGDEPBAR") + insn(0x0080, "@!PT LDS RZ, [RZ]") +
           insn(0x0090, "LDS R4, [R5]") + insn(0x00a0, "HMMA.16816.F32.BF16 R8, R4, R6, RZ") +
           insn(0x00b0, "@P1 BRA 0x0040") + insn(0x00c0, "DEPBAR.LE SB0, 0x0") + insn(0x00d0, "EXIT");
  }
};

TEST(ProtocolCheck, ACpAsyncRingThatKeepsItsRulesHasNoFinding) {
  const ProtocolReport r = check_protocol_sass(AsyncRing{}.text());
  ASSERT_TRUE(r.checked) << r.why_not;
  EXPECT_TRUE(r.pass()) << protocol_text(r);
  EXPECT_EQ(r.async_kernels, std::vector<std::string>{"w8a16_gemm_pipelined"});
  EXPECT_EQ(r.async_copies, 3u);
  EXPECT_EQ(r.async_commits, 3u);
  EXPECT_EQ(r.async_waits, 2u);
  EXPECT_EQ(r.async_waits_read, 1u);  // the lap's wait; the one after the loop is in no loop
  EXPECT_EQ(r.cta_barriers, 1u);
  // A read in the lap before its refill (another buffer the lap's barrier released) is no finding:
  // the rule holds paths across the lap's end alone.
  AsyncRing partials;
  partials.lap_start = insn(0x0050, "BAR.SYNC.DEFER_BLOCKING 0x0") + insn(0x0060, "LDS R9, [R10]") +
                       insn(0x0068, "@P0 LDGSTS.E.BYPASS.128 [R1+0x200], desc[UR4][R2.64]");
  EXPECT_TRUE(check_protocol_sass(partials.text()).pass());
}

TEST(ProtocolCheck, ARefillAboveItsBarrierAndAWaitOneGroupShortAreFound) {
  AsyncRing above;  // the next lap's refill before the barrier that ends this lap's reads
  above.lap_start = insn(0x0050, "@P0 LDGSTS.E.BYPASS.128 [R1+0x200], desc[UR4][R2.64]") +
                    insn(0x0060, "BAR.SYNC.DEFER_BLOCKING 0x0");
  ProtocolReport r = check_protocol_sass(above.text());
  ASSERT_TRUE(r.checked) << r.why_not;
  ASSERT_EQ(r.findings.size(), 1u) << protocol_text(r);
  EXPECT_EQ(r.findings[0].rule, "barrier");
  EXPECT_NE(r.findings[0].what.find("at 0x50"), std::string::npos) << r.findings[0].what;
  EXPECT_NE(r.findings[0].what.find("read at 0x90"), std::string::npos) << r.findings[0].what;
  AsyncRing shallow;  // wait_group 2 with two groups before the loop: the lap's own may be in flight
  shallow.wait = "DEPBAR.LE SB0, 0x2";
  r = check_protocol_sass(shallow.text());
  ASSERT_EQ(r.findings.size(), 1u) << protocol_text(r);
  EXPECT_EQ(r.findings[0].rule, "depth");
  EXPECT_NE(protocol_text(r).find("FAIL w8a16_gemm_pipelined [depth]"), std::string::npos) << protocol_text(r);
}

// The consumer's stage release followed by a hand-over slot's use, as the 64-column symbol's: the
// taker waits for the slot, reads it and releases it; the putter waits for the slot's release
// (skipped in the ring's first lap) and writes it.
std::string stage_release_then(const std::string& slot_part) {
  return insn(0x0140, "WARPGROUP.DEPBAR.LE gsb0, 0x0") +
         insn(0x0148, "SYNCS.ARRIVE.TRANS64.A1T0 RZ, [UR5+0x30040], RZ") + slot_part;
}

TEST(ProtocolCheck, AHandOverSlotTakenAndPutInOrderHasNoFinding) {
  Sass s;
  s.release_part = stage_release_then(insn(0x0150, "SYNCS.PHASECHK.TRANS64.TRYWAIT P5, [UR6+0x30080], R19") +
                                      insn(0x0152, "@!P5 BRA 0x0210") + insn(0x0154, "LDS R40, [UR7]") +
                                      insn(0x0156, "SYNCS.ARRIVE.TRANS64.A1T0 RZ, [UR5+0x30090], RZ"));
  EXPECT_TRUE(check_protocol_sass(s.text()).pass()) << protocol_text(check_protocol_sass(s.text()));
  // The putter: a first lap that skips the wait for the slot's release is no finding (the rule is
  // existential: some path waits), nor is a producer's arrive.expect_tx before shared-memory reads.
  s.release_part = stage_release_then(insn(0x0150, "@P6 BRA 0x0156") +
                                      insn(0x0152, "SYNCS.PHASECHK.TRANS64.TRYWAIT P5, [UR6+0x30090], R19") +
                                      insn(0x0154, "@!P5 BRA 0x0210") + insn(0x0156, "STS [UR7], R40") +
                                      insn(0x0158, "SYNCS.ARRIVE.TRANS64.A1T0 RZ, [UR5+0x30080], RZ") +
                                      insn(0x015a, "SYNCS.ARRIVE.TRANS64 RZ, [UR5+0x30000], R15") +
                                      insn(0x015c, "LDS.128 R8, [UR7]"));
  EXPECT_TRUE(check_protocol_sass(s.text()).pass()) << protocol_text(check_protocol_sass(s.text()));
}

TEST(ProtocolCheck, ASlotReleasedBeforeItsReadOrWrittenBeforeItsWaitIsAFinding) {
  Sass s;
  s.release_part = stage_release_then(insn(0x0150, "SYNCS.PHASECHK.TRANS64.TRYWAIT P5, [UR6+0x30080], R19") +
                                      insn(0x0152, "@!P5 BRA 0x0210") +
                                      insn(0x0154, "SYNCS.ARRIVE.TRANS64.A1T0 RZ, [UR5+0x30090], RZ") +
                                      insn(0x0156, "LDS R40, [UR7]"));
  ProtocolReport r = check_protocol_sass(s.text());
  ASSERT_EQ(r.findings.size(), 1u) << protocol_text(r);
  EXPECT_EQ(r.findings[0].rule, "slot");
  EXPECT_NE(r.findings[0].what.find("load at 0x156"), std::string::npos) << r.findings[0].what;
  EXPECT_NE(r.findings[0].what.find("arrival at 0x154"), std::string::npos) << r.findings[0].what;
  s.release_part = stage_release_then(insn(0x0150, "STS [UR7], R40") +
                                      insn(0x0152, "SYNCS.PHASECHK.TRANS64.TRYWAIT P5, [UR6+0x30090], R19") +
                                      insn(0x0154, "@!P5 BRA 0x0210") +
                                      insn(0x0156, "SYNCS.ARRIVE.TRANS64.A1T0 RZ, [UR5+0x30080], RZ"));
  r = check_protocol_sass(s.text());
  ASSERT_EQ(r.findings.size(), 1u) << protocol_text(r);
  EXPECT_EQ(r.findings[0].rule, "slot");
  EXPECT_NE(r.findings[0].what.find("store at 0x150"), std::string::npos) << r.findings[0].what;
  EXPECT_NE(r.findings[0].what.find("arrival at 0x148"), std::string::npos) << r.findings[0].what;
}

}  // namespace
