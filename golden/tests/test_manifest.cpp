// SPDX-License-Identifier: MIT OR Apache-2.0
// SHA-256 against FIPS 180-4's examples, and the evidence manifest format (manifest.hpp): a round
// trip, and every refusal naming its line.
#include <gtest/gtest.h>

#include <string>

#include "w8a16/golden/manifest.hpp"
#include "w8a16/golden/sha256.hpp"

namespace {
using namespace w8a16::golden;

TEST(Sha256, FipsExamples) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Manifest, RoundTripAndRefusals) {
  Manifest m;
  ManifestEntry f;
  f.name = "a.rec";
  f.bytes = 12;
  f.sha256 = std::string(64, 'a');
  f.unit = "cases";
  f.count = 3;
  f.source = Provenance::hardware;
  f.from = "NVIDIA H200, driver 580.159.04";
  ManifestEntry d;
  d.folder = true;
  d.name = "sub";
  m.entries = {f, d};
  const std::string text = format_manifest(m);
  Manifest back;
  std::string error;
  ASSERT_TRUE(parse_manifest(text, "m", &back, &error)) << error;
  ASSERT_EQ(back.entries.size(), 2u);
  EXPECT_EQ(back.entries[0].count, 3u);
  EXPECT_EQ(back.entries[0].from, f.from);
  EXPECT_TRUE(back.entries[1].folder);
  EXPECT_EQ(format_manifest(back), text);

  auto refused = [&](const std::string& t, const std::string& why) {
    Manifest x;
    std::string e;
    EXPECT_FALSE(parse_manifest(t, "m", &x, &e)) << t;
    EXPECT_NE(e.find(why), std::string::npos) << e;
  };
  const std::string magic = "w8a16check-manifest 1\n";
  const std::string line = "file a.rec bytes=12 sha256=" + std::string(64, 'a') + " cases=3 source=hardware from=x\n";
  refused("", "not an evidence manifest");
  refused("w8a16check-manifest 2\n", "version");
  refused(magic + line + line, "listed twice");
  refused(magic + "folder z\n" + line, "out of order");
  refused(magic + "file a.rec bytes=1x sha256=" + std::string(64, 'a') + " source=none from=-\n", "bytes=");
  refused(magic + "file a.rec bytes=1 sha256=abc source=none from=-\n", "sha256=");
  refused(magic + "file a.rec bytes=1 sha256=" + std::string(64, 'a') + " source=gpu from=-\n", "source=");
  refused(magic + "file a.rec bytes=1 sha256=" + std::string(64, 'a') + " source=none\n", "from=");
  refused(magic + "blob x\n", "m:2: unknown line");
}

TEST(Manifest, TheSimulationsIdentityIsKnown) {
  EXPECT_TRUE(is_simulation_identity("simulation (emulator, not hardware)", "none"));
  EXPECT_TRUE(is_simulation_identity("emulator sm90 (simulation, not hardware)", "none"));
  EXPECT_FALSE(is_simulation_identity("NVIDIA H200", "9.0"));
}

}  // namespace
