// SPDX-License-Identifier: MIT OR Apache-2.0
// The evidence verify counts (golden/include/w8a16/golden/manifest.hpp, properties/include/w8a16/properties/evidence.hpp)
// as processes: a copy of golden/ with one evidence file missing, added, cut, changed, or made by the
// simulation, or with no manifest at all, is a FAIL (exit 1) naming the file; the intact copy passes.
// verify runs one entry point's saved cases on the simulation, no drawn or coverage cases, and the
// recordings only where they are the subject, so the whole suite stays within seconds.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "cli_run.hpp"
#include "w8a16/golden/manifest.hpp"
#include "w8a16/golden/recording.hpp"
#include "w8a16/golden/sha256.hpp"

namespace {
namespace fs = std::filesystem;
using w8a16::cli_test::CliRun;
using w8a16::cli_test::slurp;

const fs::path kGolden = fs::path(W8A16_SOURCE_DIR) / "golden";

CliRun cli(const std::string& args) { return w8a16::cli_test::run_cli(args); }

void spit(const fs::path& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

// A copy of the data folder's evidence folders (what verify reads, and order/) in a fresh folder.
fs::path copy_of_golden(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("w8a16_evidence_" + name) / "golden";
  fs::remove_all(dir.parent_path());
  fs::create_directories(dir);
  for (const char* sub : {"mma", "recordings", "cases", "order"})
    fs::copy(kGolden / sub, dir / sub, fs::copy_options::recursive);
  return dir;
}

// verify, quickly: the saved cases of one entry point on the simulation; the recordings too when asked.
CliRun verify(const fs::path& data, bool recordings, const std::string& more = "") {
  return cli(
      "verify --backend sim --no-invariance --cases 0 --no-coverage --no-save --entry gemv_batch4_strided --data-dir '" +
      data.string() + "'" + (recordings ? "" : " --no-recordings") + " " + more);
}

// The copy's h200.rec cut to its first n cases (a whole version-2 file, the H200's header), the
// folder's manifest left as it was: only the manifest knows the file is short.
void shorten_recording(const fs::path& data, std::size_t n) {
  w8a16::golden::Recording rec;
  std::string error;
  ASSERT_TRUE(w8a16::golden::read_recording_file((data / "recordings" / "h200.rec").string(), &rec, &error)) << error;
  rec.outputs.resize(n);
  ASSERT_TRUE(w8a16::golden::write_recording_file((data / "recordings" / "h200.rec").string(), rec, &error)) << error;
}

// The first n cases of h200.rec as a version-1 text: no trailer, so nothing in it says it was cut.
std::string v1_cut(const std::string& v2, int n) {
  std::string out;
  int outs = 0;
  std::size_t start = 0;
  while (start < v2.size()) {
    const std::size_t end = v2.find('\n', start);
    std::string line = v2.substr(start, end - start + 1);
    start = end + 1;
    if (line.rfind("w8a16check-recording 2", 0) == 0) line = "w8a16check-recording 1\n";
    if (line.rfind("end ", 0) == 0) break;
    if (line.rfind("out ", 0) == 0 && ++outs > n) break;
    out += line;
  }
  return out;
}

// The first n cases of h200.rec as a version-2 text cut at a line boundary (its trailer lost).
std::string v2_cut(const std::string& v2, int n) {
  std::size_t at = 0;
  for (int i = 0; i <= n; ++i) at = v2.find("\nout ", at + 1);
  return v2.substr(0, at + 1);
}

void expect_fail_naming(const CliRun& r, const std::string& name, const std::string& what) {
  EXPECT_EQ(r.exit_status, 1) << r.output;
  EXPECT_NE(r.output.find("FAIL "), std::string::npos) << r.output;
  const std::string line = "not a pass: ";
  const std::size_t at = r.output.find(line);
  ASSERT_NE(at, std::string::npos) << r.output;
  // The reason itself names the file and says what is wrong with it.
  bool named = false;
  for (std::size_t p = at; p != std::string::npos; p = r.output.find(line, p + 1)) {
    const std::string reason = r.output.substr(p, r.output.find('\n', p) - p);
    named |= reason.find(name) != std::string::npos && reason.find(what) != std::string::npos;
  }
  EXPECT_TRUE(named) << "no reason names " << name << " with '" << what << "':\n" << r.output;
  EXPECT_NE(r.output.find("verdict: FAIL"), std::string::npos) << r.output;
}

TEST(EvidenceCli, TheCommittedManifestsHoldAndTheIntactCopyPasses) {
  const CliRun check = cli("manifest --check '" + (kGolden / "mma").string() + "' '" +
                           (kGolden / "recordings").string() + "' '" + (kGolden / "cases").string() + "' '" +
                           (kGolden / "order").string() + "'");
  EXPECT_EQ(check.exit_status, 0) << check.output;
  EXPECT_NE(check.output.find(", 0 problems"), std::string::npos) << check.output;

  const fs::path data = copy_of_golden("intact");
  const CliRun r = verify(data, false, "--json '" + (data.parent_path() / "v.json").string() + "'");
  EXPECT_EQ(r.exit_status, 0) << r.output;
  EXPECT_NE(r.output.find("evidence (manifests): 6 folders, 6 manifests"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" 0 problems"), std::string::npos) << r.output;  // recordings/ is not read: --no-recordings
  EXPECT_NE(slurp(data.parent_path() / "v.json").find("\"evidence\""), std::string::npos);

  // With the recordings: the copy's h200.rec replaced by its first 3 cases and that folder's
  // manifest rewritten, as after a real recording.
  shorten_recording(data, 3);
  const CliRun stale = verify(data, true);
  expect_fail_naming(stale, "h200.rec", "holds 3 cases, its manifest says 313");
  const CliRun write = cli("manifest --write '" + (data / "recordings").string() + "'");
  ASSERT_EQ(write.exit_status, 0) << write.output;
  const CliRun ok = verify(data, true);
  EXPECT_EQ(ok.exit_status, 0) << ok.output;
  EXPECT_NE(ok.output.find("3 recorded cases: emulator 0 differ"), std::string::npos) << ok.output;
}

TEST(EvidenceCli, AMissingAnAddedAndACutMmavEachFailNamingIt) {
  const fs::path data = copy_of_golden("mmav");
  const fs::path h200 = data / "mma" / "h200";
  fs::remove(data / "mma" / "h200-vectors" / "h200_3_w8a16_realistic.mmav");
  expect_fail_naming(verify(data, false), "h200_3_w8a16_realistic.mmav", "missing");
  fs::copy(kGolden / "mma" / "h200-vectors" / "h200_3_w8a16_realistic.mmav", data / "mma" / "h200-vectors");

  fs::copy(h200 / "h200_10_targeted.mmav", h200 / "h200_11_extra.mmav");
  expect_fail_naming(verify(data, false), "h200_11_extra.mmav", "not listed");
  fs::remove(h200 / "h200_11_extra.mmav");

  const std::string whole = slurp(h200 / "h200_5_rounding.mmav");
  spit(h200 / "h200_5_rounding.mmav", whole.substr(0, whole.size() - 1));
  expect_fail_naming(verify(data, false), "h200_5_rounding.mmav", "(cut)");
  // One whole MMA fewer, with the count in its header made to agree: it reads as a valid file, and
  // only the manifest knows it is short.
  std::string shorter = whole.substr(0, whole.size() - 1792);
  const std::uint32_t count = static_cast<std::uint32_t>((whole.size() - 16) / 1792) - 1;  // little-endian at 8
  for (int i = 0; i < 4; ++i) shorter[8 + i] = static_cast<char>((count >> (8 * i)) & 0xFF);
  spit(h200 / "h200_5_rounding.mmav", shorter);
  expect_fail_naming(verify(data, false), "h200_5_rounding.mmav", "holds 32640 dot_products, its manifest says 32768");
  spit(h200 / "h200_5_rounding.mmav", whole);
  EXPECT_EQ(verify(data, false).exit_status, 0);
}

TEST(EvidenceCli, ACaseFileLosingALineFailsNamingIt) {
  const fs::path data = copy_of_golden("case");
  const std::string text = slurp(data / "cases" / "hopper_tier.case");
  const std::size_t last = text.rfind("\ncase/1 ");
  spit(data / "cases" / "hopper_tier.case", text.substr(0, last + 1));
  expect_fail_naming(verify(data, false), "hopper_tier.case", "holds 15 cases, its manifest says 16");
}

TEST(EvidenceCli, ARecordingCutToThreeCasesFailsNamingItInVersionOneAndTwo) {
  const fs::path data = copy_of_golden("rec");
  const fs::path rec = data / "recordings" / "h200.rec";
  const std::string whole = slurp(rec);
  spit(rec, v1_cut(whole, 3));
  const CliRun v1 = verify(data, true);
  expect_fail_naming(v1, "h200.rec", "holds 3 cases, its manifest says 313");
  EXPECT_NE(v1.output.find("version-1 recording"), std::string::npos) << v1.output;
  spit(rec, v2_cut(whole, 3));
  expect_fail_naming(verify(data, true), "h200.rec", "bytes, its manifest says 1070890 (cut)");

  // Outside the data folder, without a manifest, a version-1 recording cannot pass either.
  const fs::path own = data.parent_path() / "own";
  fs::create_directories(own);
  spit(own / "old.rec", v1_cut(whole, 3));
  expect_fail_naming(verify(data, true, "--recordings-from '" + (own / "old.rec").string() + "'"), "old.rec",
                     "version-1 recording (no trailer) that no manifest lists");

  // upgrade-recording: refuses the cut one beside its manifest, and one whose --cases disagrees;
  // takes an unlisted one only with the count it was recorded with.
  spit(rec, v1_cut(whole, 3));
  const CliRun beside = cli("upgrade-recording '" + rec.string() + "' --out '" + (own / "u.rec").string() + "'");
  EXPECT_EQ(beside.exit_status, 2) << beside.output;
  EXPECT_NE(beside.output.find("holds 3 cases"), std::string::npos) << beside.output;
  EXPECT_NE(beside.output.find("says 313"), std::string::npos) << beside.output;
  const CliRun bare = cli("upgrade-recording '" + (own / "old.rec").string() + "' --out '" + (own / "u.rec").string() +
                          "'");
  EXPECT_EQ(bare.exit_status, 2) << bare.output;
  EXPECT_NE(bare.output.find("pass --cases N"), std::string::npos) << bare.output;
  const CliRun wrong = cli("upgrade-recording '" + (own / "old.rec").string() + "' --cases 311 --out '" +
                           (own / "u.rec").string() + "'");
  EXPECT_EQ(wrong.exit_status, 2) << wrong.output;
  EXPECT_NE(wrong.output.find("holds 3 cases, --cases says 311 (cut?)"), std::string::npos) << wrong.output;
  EXPECT_FALSE(fs::exists(own / "u.rec"));
  const CliRun right = cli("upgrade-recording '" + (own / "old.rec").string() + "' --cases 3 --out '" +
                           (own / "u.rec").string() + "'");
  EXPECT_EQ(right.exit_status, 0) << right.output;
}

TEST(EvidenceCli, TheSimulationsFilesStayOutOfTheDataFolderAndFailWhenPutThere) {
  const fs::path data = copy_of_golden("sim");
  const fs::path sim = data.parent_path() / "sim";
  // Not into the data folder unless told: no --out, or an --out inside it, is refused.
  const CliRun no_out = cli("probe --source sim --cases 1 --data-dir '" + data.string() + "'");
  EXPECT_EQ(no_out.exit_status, 2) << no_out.output;
  EXPECT_NE(no_out.output.find("pass --out DIR"), std::string::npos) << no_out.output;
  const CliRun inside = cli("probe --source sim --cases 1 --data-dir '" + data.string() + "' --out '" +
                            (data / "mma").string() + "'");
  EXPECT_EQ(inside.exit_status, 2) << inside.output;
  EXPECT_NE(inside.output.find("--into-data-dir"), std::string::npos) << inside.output;
  const std::string one =
      "case/1 w8a16_gemv_batch4_strided m=3 n=7 k=640 a_row_stride=648 c_row_stride=9 dist=specials "
      "seed=0x0000000000000042 gen=1\n";
  spit(data.parent_path() / "one.case", one);
  // record finds the data folder as verify would: this copy through W8A16_DATA_DIR.
  const CliRun rec_env = w8a16::cli_test::run_process("W8A16_DATA_DIR='" + data.string() +
                                                      "' '" W8A16_CLI_PATH "' record --source sim --cases '" +
                                                      (data.parent_path() / "one.case").string() + "' --out '" +
                                                      (data / "recordings" / "sim.rec").string() + "'");
  EXPECT_EQ(rec_env.exit_status, 2) << rec_env.output;
  EXPECT_NE(rec_env.output.find("--into-data-dir"), std::string::npos) << rec_env.output;

  // Made elsewhere and copied in: its folder, its probe MANIFEST and its evidence manifest say simulation.
  const CliRun probe = cli("probe --source sim --cases 1 --out '" + sim.string() + "'");
  ASSERT_EQ(probe.exit_status, 0) << probe.output;
  fs::copy(sim / "emulator-sm90-not-hardware" / "emulator-sm90-not-hardware_4_specials.mmav", data / "mma" / "h200");
  expect_fail_naming(verify(data, false), "emulator-sm90-not-hardware_4_specials.mmav", "not listed");
  // Listed by a manifest rewritten over it: still the simulation's, and still a FAIL.
  fs::remove(data / "mma" / "h200" / "emulator-sm90-not-hardware_4_specials.mmav");
  fs::copy(sim / "emulator-sm90-not-hardware", data / "mma" / "emulator-sm90-not-hardware",
           fs::copy_options::recursive);
  ASSERT_EQ(cli("manifest --write '" + (data / "mma").string() + "'").exit_status, 0);
  const CliRun listed = verify(data, false);
  expect_fail_naming(listed, "emulator-sm90-not-hardware_0_uniform.mmav", "made by the simulation");
  EXPECT_NE(listed.output.find("failing the evidence check not counted"), std::string::npos) << listed.output;

  // A simulation recording in the data folder, listed or not, is a FAIL naming it.
  const CliRun made = cli("record --source sim --cases '" + (data.parent_path() / "one.case").string() + "' --out '" +
                          (sim / "sim.rec").string() + "'");
  ASSERT_EQ(made.exit_status, 0) << made.output;
  fs::remove_all(data / "mma" / "emulator-sm90-not-hardware");
  ASSERT_EQ(cli("manifest --write '" + (data / "mma").string() + "'").exit_status, 0);
  fs::copy(sim / "sim.rec", data / "recordings" / "sim.rec");
  expect_fail_naming(verify(data, true, "--recordings-from '" + (data / "recordings" / "sim.rec").string() + "'"),
                     "sim.rec", "made by the simulation");
}

TEST(EvidenceCli, ADataFolderWithoutManifestsFailsSayingSo) {
  const fs::path data = copy_of_golden("bare");
  for (const auto& e : fs::recursive_directory_iterator(data))
    if (e.path().filename() == "evidence-manifest.txt") fs::remove(e.path());
  expect_fail_naming(verify(data, false), "holds no evidence manifest", "data folder");
  // Files named on the command line outside the data folder are the user's own and need none.
  const fs::path own = data.parent_path() / "own";
  fs::create_directories(own);
  fs::copy(kGolden / "mma" / "h200" / "h200_10_targeted.mmav", own);
  const CliRun mine = cli(
      "verify --backend sim --cases 0 --no-coverage --no-save --no-recordings --entry gemv_batch4_strided "
      "--mma-dir '" +
      own.string() + "' --cases-from '" + (kGolden / "cases").string() + "'");
  EXPECT_EQ(mine.exit_status, 0) << mine.output;
  EXPECT_NE(mine.output.find("the user's own"), std::string::npos) << mine.output;
}

// Rewrites the entry `name` of `dir`'s manifest with what `edit` makes of it.
template <typename Edit>
void edit_manifest(const fs::path& dir, const std::string& name, Edit edit) {
  const fs::path path = dir / std::string(w8a16::golden::kManifestFileName);
  w8a16::golden::Manifest m;
  std::string error;
  ASSERT_TRUE(w8a16::golden::parse_manifest(slurp(path), path.string(), &m, &error)) << error;
  bool found = false;
  for (w8a16::golden::ManifestEntry& e : m.entries)
    if (e.name == name) {
      edit(e);
      found = true;
    }
  ASSERT_TRUE(found) << name;
  spit(path, w8a16::golden::format_manifest(m));
}

TEST(EvidenceCli, AFolderNamedLikeDocumentationIsCheckedAndNothingInItCounts) {
  const fs::path data = copy_of_golden("md_folder");
  // The recordings' replay is not what this test holds: three cases of h200.rec, listed anew,
  // keep its three runs with recordings to seconds (the whole file is replayed elsewhere).
  shorten_recording(data, 3);
  ASSERT_EQ(cli("manifest --write '" + (data / "recordings").string() + "'").exit_status, 0);
  const fs::path sim = data.parent_path() / "sim";
  ASSERT_EQ(cli("probe --source sim --cases 1 --out '" + sim.string() + "'").exit_status, 0);
  // Emulator-made MMAs under mma/, in a folder whose name ends in .md.
  fs::create_directories(data / "mma" / "notes.md");
  fs::copy(sim / "emulator-sm90-not-hardware", data / "mma" / "notes.md", fs::copy_options::recursive);
  const CliRun mmav = verify(data, false);
  expect_fail_naming(mmav, "notes.md", "a folder not listed");
  EXPECT_NE(mmav.output.find("failing the evidence check not counted"), std::string::npos) << mmav.output;
  fs::remove_all(data / "mma" / "notes.md");

  // A simulation recording under recordings/, in such a folder; and a link named *.md.
  const std::string one =
      "case/1 w8a16_gemv_batch4_strided m=3 n=7 k=640 a_row_stride=648 c_row_stride=9 dist=specials "
      "seed=0x0000000000000042 gen=1\n";
  spit(data.parent_path() / "one.case", one);
  ASSERT_EQ(cli("record --source sim --cases '" + (data.parent_path() / "one.case").string() + "' --out '" +
                (sim / "sim.rec").string() + "'")
                .exit_status,
            0);
  fs::create_directories(data / "recordings" / "extra.md");
  fs::copy(sim / "sim.rec", data / "recordings" / "extra.md" / "sim.rec");
  expect_fail_naming(verify(data, true), "extra.md", "a folder not listed");
  fs::remove_all(data / "recordings" / "extra.md");
  fs::create_directory_symlink(sim, data / "recordings" / "link.md");
  expect_fail_naming(verify(data, true), "link.md", "not a regular file or folder");
  fs::remove(data / "recordings" / "link.md");
  // A regular file named *.md is documentation: aside, as before.
  spit(data / "recordings" / "NOTES.md", "# notes\n");
  EXPECT_EQ(verify(data, true).exit_status, 0);
}

TEST(EvidenceCli, AManifestEntryWithAProvenanceItsKindCannotHaveFails) {
  for (const auto source : {w8a16::golden::Provenance::none, w8a16::golden::Provenance::input}) {
    const std::string name = w8a16::golden::provenance_name(source);
    const fs::path data = copy_of_golden("provenance_" + name);
    edit_manifest(data / "mma" / "h200", "h200_10_targeted.mmav",
                  [&](w8a16::golden::ManifestEntry& e) { e.source = source; });
    const CliRun r = verify(data, false);
    expect_fail_naming(r, "h200_10_targeted.mmav", "source=" + name + ", which recorded evidence cannot have");
    EXPECT_NE(r.output.find("failing the evidence check not counted"), std::string::npos) << r.output;
    // The check of the folders alone says the same, and `manifest --write` does not carry it over.
    const CliRun check = cli("manifest --check '" + (data / "mma").string() + "'");
    EXPECT_EQ(check.exit_status, 1) << check.output;
    EXPECT_NE(check.output.find("source=" + name), std::string::npos) << check.output;
  }
  const fs::path data = copy_of_golden("provenance_case");
  edit_manifest(data / "cases", "hopper_tier.case",
                [](w8a16::golden::ManifestEntry& e) { e.source = w8a16::golden::Provenance::hardware; });
  expect_fail_naming(verify(data, false), "hopper_tier.case", "source=hardware, which this kind of file cannot have");
}

TEST(EvidenceCli, ManifestWriteRefusesToRelistACutVersionOneRecording) {
  const fs::path data = copy_of_golden("v1_write");
  const fs::path rec = data / "recordings" / "h200.rec";
  const std::string whole = slurp(rec);
  // The whole recording as version 1, listed as such (as a manifest written before the trailer).
  const std::string v1 = v1_cut(whole, 1 << 30);
  spit(rec, v1);
  edit_manifest(data / "recordings", "h200.rec", [&](w8a16::golden::ManifestEntry& e) {
    e.bytes = v1.size();
    e.sha256 = w8a16::golden::sha256_hex(v1);
  });
  // Unchanged: listed again with its count.
  EXPECT_EQ(cli("manifest --write '" + (data / "recordings").string() + "'").exit_status, 0);
  const std::string listed = slurp(data / "recordings" / "evidence-manifest.txt");
  EXPECT_NE(listed.find("cases=313 "), std::string::npos) << listed;

  spit(rec, v1_cut(whole, 3));
  const CliRun w = cli("manifest --write '" + (data / "recordings").string() + "'");
  EXPECT_EQ(w.exit_status, 2) << w.output;
  EXPECT_NE(w.output.find("version-1 recording"), std::string::npos) << w.output;
  EXPECT_NE(w.output.find("it says 313 cases; this file holds 3"), std::string::npos) << w.output;
  EXPECT_NE(w.output.find("upgrade-recording"), std::string::npos) << w.output;
  EXPECT_EQ(slurp(data / "recordings" / "evidence-manifest.txt"), listed);  // nothing written
  expect_fail_naming(verify(data, true), "h200.rec", "holds 3 cases, its manifest says 313");
}

}  // namespace
