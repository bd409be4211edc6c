// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check probe`: records mma.sync m16n8k16 (BF16 x BF16 + FP32) on the GPU over the 10 regimes
// and the targeted cases of NUMERICS.md 1.1 / 3 as .mmav files, then replays them against the
// emulator's policy for the device's architecture (NUMERICS.md 3: only a probe verifies a policy).
// The instruments themselves (kernels, module, launcher) are device/probes/.
#include "run_probe.hpp"

#include "backends.hpp"

#include "numbers.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "data_dir.hpp"
#include "gpu_identity.hpp"
#include "w8a16/golden/files.hpp"
#include "w8a16/golden/manifest.hpp"
#include "w8a16/properties/mmav_replay.hpp"
#include "w8a16/golden/mma_probe.hpp"
#include "w8a16/golden/mmav.hpp"
#include "w8a16/golden/recording.hpp"
#include "w8a16/reference/mma.hpp"
#include "w8a16/version.hpp"
#if W8A16_HAVE_CUDA
#include "w8a16/probes/probes.hpp"
#endif

namespace w8a16::cli {
namespace cmd_probe {
namespace fs = std::filesystem;

// One recorded instruction form: its .mmav kind, the tag its files carry ("" for mma.sync, whose
// files keep their original names), and how the probe kernel runs it.
struct Variant {
  std::uint32_t kind;
  const char* tag;
  bool wgmma, a_from_regs, scale_d;
};
constexpr Variant kMmaSync{golden::kMmavKindM16n8k16Bf16, "", false, false, true};
constexpr Variant kWgmmaVariants[] = {
    {golden::kMmavKindWgmmaSsD1, "wgmma_m64n8k16_ss_d1", true, false, true},
    {golden::kMmavKindWgmmaRsD1, "wgmma_m64n8k16_rs_d1", true, true, true},
    {golden::kMmavKindWgmmaSsD0, "wgmma_m64n8k16_ss_d0", true, false, false},
    {golden::kMmavKindWgmmaRsD0, "wgmma_m64n8k16_rs_d0", true, true, false},
};

// Where the D of a batch of cases comes from.
class MmaSource {
 public:
  virtual ~MmaSource() = default;
  virtual GpuIdentity identity() const = 0;
  virtual bool is_hardware() const = 0;
  // Fills every case's d under the variant; with scale-d 0 it also sets c to +0 (what the
  // instruction computed from). False with *error on failure (the cases are then unusable).
  virtual bool run(const Variant& v, std::vector<golden::MmavCase>* cases, std::string* error) = 0;
};

// For testing the probe's file handling without a GPU: D from the emulator's sm90 policy. What it
// writes is NOT a recording of hardware; its folder and manifest say so.
class EmulatorSource final : public MmaSource {
 public:
  GpuIdentity identity() const override { return {"emulator sm90 (simulation, not hardware)", "none", "none", "none"}; }
  bool is_hardware() const override { return false; }
  bool run(const Variant& v, std::vector<golden::MmavCase>* cases, std::string*) override {
    for (golden::MmavCase& c : *cases) {
      if (!v.scale_d) c.c.fill(0);
      for (int m = 0; m < 16; ++m)
        for (int n = 0; n < 8; ++n)
          c.d[m * 8 + n] = ref::mma_k16_bits(ref::kMmaSm90, c.c[m * 8 + n], &c.a[m * 16], &c.bt[n * 16]);
    }
    return true;
  }
};

#if W8A16_HAVE_CUDA
// D from the GPU through the probe module (device/probes/).
class GpuSource final : public MmaSource {
 public:
  explicit GpuSource(std::unique_ptr<probes::ProbeLauncher> gpu) : gpu_(std::move(gpu)) {}
  GpuIdentity identity() const override {
    const device::CudaDeviceInfo i = gpu_->device_info();
    return {i.name, std::to_string(i.cc_major) + "." + std::to_string(i.cc_minor), nvidia_driver_version(),
            cuda_version_text(i.driver_cuda_version)};
  }
  bool is_hardware() const override { return true; }
  bool run(const Variant& v, std::vector<golden::MmavCase>* cases, std::string* error) override {
    probes::ProbeOperands in;
    for (const golden::MmavCase& x : *cases) {
      in.a.insert(in.a.end(), x.a.begin(), x.a.end());
      in.bt.insert(in.bt.end(), x.bt.begin(), x.bt.end());
      in.c.insert(in.c.end(), x.c.begin(), x.c.end());
    }
    std::vector<std::uint32_t> d;
    const device::Status st = gpu_->run(v.wgmma ? probes::ProbeKernel::wgmma_m64n8k16_bf16
                                                : probes::ProbeKernel::mma_m16n8k16_bf16,
                                        probes::ProbeForm{v.a_from_regs, v.scale_d}, in, &d);
    if (!st.ok()) {
      *error = st.message;
      return false;
    }
    for (std::size_t i = 0; i < cases->size(); ++i) {
      golden::MmavCase& x = (*cases)[i];
      std::copy(d.begin() + static_cast<std::ptrdiff_t>(128 * i),
                d.begin() + static_cast<std::ptrdiff_t>(128 * (i + 1)), x.d.begin());
      if (!v.scale_d) x.c.fill(0);
    }
    return true;
  }

 private:
  std::unique_ptr<probes::ProbeLauncher> gpu_;
};
#endif

bool write_bytes(const fs::path& path, const std::vector<std::uint8_t>& bytes, std::string* error) {
  std::string why;
  if (golden::write_file_atomic(path.string(),
                                std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), &why))
    return true;
  *error = golden::shown(path.string()) + ": " + why;
  return false;
}

// The emulator's policy for a compute capability ("9.0" -> sm90: reference/mma.hpp mma_policy)
// when that policy is verified (NUMERICS.md 1.1, 3: sm_90 only); else none.
const ref::MmaPolicy* verified_policy_for(const std::string& cc) {
  std::string digits;
  for (char ch : cc)
    if (ch != '.') digits += ch;
  ref::Arch arch;
  if (!ref::parse_arch("sm" + digits, &arch)) return nullptr;
  const ref::MmaPolicy& policy = ref::mma_policy(arch);
  return policy.verified ? &policy : nullptr;
}

// The exit status of an input error: nothing was recorded.
constexpr int kProbeError = 2;

// Where D comes from (--source); nullptr after printing why not, with *no_gpu set when this machine
// has no GPU for --source cuda (exit 77, README "Exit status").
std::unique_ptr<MmaSource> open_source(const ProbeArgs& a, bool* no_gpu) {
  if (a.source == "sim") return std::make_unique<EmulatorSource>();
  if (a.source == "cuda") {
#if W8A16_HAVE_CUDA
    device::Status st;
    auto gpu = probes::ProbeLauncher::create(0, &st);
    if (gpu) return std::make_unique<GpuSource>(std::move(gpu));
    *no_gpu = st.code == device::Errc::no_device;
    if (*no_gpu) {
      backend_refused("probe", st.message + "; nothing was recorded", true);
      return nullptr;
    }
    std::fprintf(stderr, "probe: no GPU: %s\nprobe: nothing was recorded\n", st.message.c_str());
#else
    std::fprintf(stderr,
                 "probe: no GPU: this build has no CUDA backend (configure with the cuda preset)\n"
                 "probe: nothing was recorded\n");
#endif
    return nullptr;
  }
  std::fprintf(stderr, "probe: --source %s must be cuda or sim\n", golden::quote(a.source).c_str());
  return nullptr;
}

// The parent folder of the recordings (--out, else the data folder's mma/); "" after printing why
// not. The simulation's MMAs are the emulator's own values: in the data folder they would pass for
// hardware evidence, so they go only where they are sent (golden/mma/README.md).
std::string output_root(const ProbeArgs& a, bool hardware) {
  if (!hardware) {
    if (a.out_root.empty() && !a.into_data_dir) {
      std::fprintf(
          stderr,
          "probe: --source sim writes the emulator's values, not hardware: pass --out DIR (it never "
          "writes into the data folder's mma/ unless --into-data-dir is given)\nprobe: nothing was recorded\n");
      return "";
    }
    if (!a.out_root.empty()) {
      const std::string why = simulation_output_refusal(a.out_root, a.data_dir, a.into_data_dir);
      if (!why.empty()) {
        std::fprintf(stderr, "probe: --out %s\nprobe: nothing was recorded\n", why.c_str());
        return "";
      }
    }
  }
  if (!a.out_root.empty()) return a.out_root;
  const DataDir data = find_data_dir(a.data_dir);
  if (data.path.empty()) {
    std::fprintf(stderr, "probe: %s (or pass --out)\nprobe: nothing was recorded\n", data.error.c_str());
    return "";
  }
  std::printf("%s\n", data_dir_line(data).c_str());
  return (fs::path(data.path) / "mma").string();
}

// One probe run: where its files go and what they hold.
struct ProbeRun {
  explicit ProbeRun(const ProbeArgs& args) : a(args) {}
  const ProbeArgs& a;
  std::uint64_t seed = 0;
  std::unique_ptr<MmaSource> source;
  std::vector<Variant> variants;
  std::string out_root, slug;
  fs::path dir;
  GpuIdentity id;
  std::vector<std::pair<std::string, golden::MmavFile>> files;

  // The names this run writes: <slug>_<i>_<regime>.mmav, or <slug>_<tag>_<i>_<regime>.mmav.
  std::string file_name(const Variant& v, int r) const {
    return slug + "_" + (v.tag[0] ? std::string(v.tag) + "_" : std::string()) + std::to_string(r) + "_" +
           std::string(golden::probe_regime_name(static_cast<golden::ProbeRegime>(r))) + ".mmav";
  }
};

// The options, the source and the folder, before anything runs; false after printing why not.
bool prepare(ProbeRun* p, bool* no_gpu) {
  const ProbeArgs& a = p->a;
  if (!parse_whole_number(a.seed_text, &p->seed)) {
    std::fprintf(stderr, "probe: --seed %s is not an unsigned integer (decimal or 0x hex)\n",
                 golden::quote(a.seed_text).c_str());
    return false;
  }
  if (a.cases < 1 || a.cases > 65536) {
    std::fprintf(stderr, "probe: --cases %u must be in 1..65536 (cases per regime)\n", a.cases);
    return false;
  }
  p->source = open_source(a, no_gpu);
  if (!p->source) return false;
  if (a.instruction == "mma.sync") {
    p->variants = {kMmaSync};
  } else if (a.instruction == "wgmma") {
    p->variants.assign(std::begin(kWgmmaVariants), std::end(kWgmmaVariants));
  } else {
    std::fprintf(stderr, "probe: --instruction %s must be mma.sync or wgmma\n", golden::quote(a.instruction).c_str());
    return false;
  }
  p->out_root = output_root(a, p->source->is_hardware());
  if (p->out_root.empty()) return false;
  p->id = p->source->identity();
  p->slug = p->source->is_hardware() ? golden::gpu_slug(p->id.name) : "emulator-sm90-not-hardware";
  p->dir = fs::path(p->out_root) / p->slug;
  std::error_code ec;
  if (fs::exists(p->dir, ec) && !fs::is_directory(p->dir, ec)) {
    std::fprintf(stderr, "probe: %s exists and is not a folder\n", golden::shown(p->dir.string()).c_str());
    return false;
  }
  if (fs::is_directory(p->dir, ec) && !a.overwrite) {
    for (const Variant& v : p->variants)
      for (int r = 0; r < golden::kProbeRegimeCount; ++r)
        if (fs::exists(p->dir / p->file_name(v, r), ec)) {
          std::fprintf(stderr, "probe: %s already holds recordings (%s); pass --overwrite to replace them\n",
                       golden::shown(p->dir.string()).c_str(), p->file_name(v, r).c_str());
          return false;
        }
  }
  return true;
}

// Every regime of every variant, run first: the files are written only when every regime ran, so
// a failure leaves no partial set. What is written must read back: each file parsed as its reader
// will parse it, and the identity that goes into MANIFEST.txt's one-line fields printable, before
// anything is written. False after printing why not.
bool record_all(ProbeRun* p) {
  for (const Variant& v : p->variants)
    for (int r = 0; r < golden::kProbeRegimeCount; ++r) {
      const auto regime = static_cast<golden::ProbeRegime>(r);
      golden::MmavFile f;
      f.kind = v.kind;
      f.cases = regime == golden::ProbeRegime::targeted ? golden::probe_targeted_cases()
                                                        : golden::probe_regime_cases(regime, p->a.cases, p->seed);
      std::string error;
      if (!p->source->run(v, &f.cases, &error)) {
        std::fprintf(stderr, "probe: %s, regime %s: %s\nprobe: nothing was written\n",
                     golden::mmav_kind_instruction(v.kind), std::string(golden::probe_regime_name(regime)).c_str(),
                     error.c_str());
        return false;
      }
      p->files.emplace_back(p->file_name(v, r), std::move(f));
    }
  for (const auto& [name, f] : p->files) {
    const std::vector<std::uint8_t> bytes = golden::serialize_mmav(f);
    golden::MmavFile back;
    std::string error;
    if (!golden::parse_mmav(bytes.data(), bytes.size(), &back, &error)) {
      std::fprintf(stderr, "probe: %s would not read back: %s\nprobe: nothing was written\n", name.c_str(),
                   golden::escaped(error).c_str());
      return false;
    }
  }
  for (const std::string* field : {&p->id.name, &p->id.compute_capability, &p->id.driver, &p->id.cuda}) {
    bool printable = !field->empty();
    for (const char ch : *field) printable = printable && static_cast<unsigned char>(ch) >= 0x20 && ch != 0x7F;
    if (!printable) {
      std::fprintf(stderr,
                   "probe: the device's identity %s is empty or holds a control byte: MANIFEST.txt could not "
                   "hold it\nprobe: nothing was written\n",
                   golden::quote(*field).c_str());
      return false;
    }
  }
  return true;
}

// The .mmav files, their MANIFEST (what they are and where they came from) and the folder's
// evidence manifest (manifest.hpp: each file's size, SHA-256, dot products and, from the MANIFEST
// just written, whether it is hardware). False after printing why not.
bool write_all(const ProbeRun& p) {
  std::error_code ec;
  fs::create_directories(p.dir, ec);
  if (ec) {
    std::fprintf(stderr, "probe: cannot create %s: %s\n", golden::shown(p.dir.string()).c_str(), ec.message().c_str());
    return false;
  }
  const GpuIdentity& id = p.id;
  const bool wgmma = p.variants.front().wgmma;
  std::string
      manifest = std::string("# SPDX-License-Identifier: MIT OR Apache-2.0\n") +
                 (wgmma ? "# wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 (A from shared memory: ss, from "
                          "registers: rs; scale-d 1: d1, 0: d0) recorded by `w8a16check probe --instruction wgmma`\n"
                        : "# mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 recorded by `w8a16check probe`\n") +
                 "# (format: golden/mma/README.md; inputs: golden/src/mma_probe.cpp).\n" +
                 "hardware: " + (p.source->is_hardware() ? "yes" : "NO (emulator sm90 policy)") + "\n" +
                 "gpu: " + id.name + "\ncompute_capability: " + id.compute_capability + "\ndriver: " + id.driver +
                 "\ncuda: " + id.cuda + "\ncommit: " + kGitCommit + "\ncases_per_regime: " + std::to_string(p.a.cases) +
                 "\nseed: " + p.a.seed_text + "\n";
  std::string error;
  for (const auto& [name, f] : p.files) {
    if (!write_bytes(p.dir / name, golden::serialize_mmav(f), &error)) {
      std::fprintf(stderr, "probe: %s\n", error.c_str());
      return false;
    }
    manifest += "file: " + name + " " + std::to_string(f.cases.size()) + " cases, kind " + std::to_string(f.kind) +
                ": " + golden::mmav_kind_instruction(f.kind) + "\n";
  }
  const std::vector<std::uint8_t> bytes(manifest.begin(), manifest.end());
  if (!write_bytes(p.dir / (wgmma ? "MANIFEST-wgmma_m64n8k16.txt" : "MANIFEST.txt"), bytes, &error)) {
    std::fprintf(stderr, "probe: %s\n", error.c_str());
    return false;
  }
  std::printf("probe: wrote %zu files to %s\n", p.files.size(), golden::shown(p.dir.string()).c_str());
  golden::Manifest m;
  const std::string mpath = (p.dir / std::string(golden::kManifestFileName)).string();
  if (!golden::build_manifest(p.dir.string(), golden::ManifestSource{}, &m, &error) ||
      !golden::write_file_atomic(mpath, golden::format_manifest(m), &error)) {
    // Without it verify counts every file just written as added to the evidence: a FAIL later.
    std::fprintf(stderr, "probe: the evidence manifest was not written: %s\n", error.c_str());
    return false;
  }
  std::printf("probe: wrote %s (%s); the folder above lists its folders: `w8a16check manifest --write %s`\n",
              golden::shown(mpath).c_str(), p.source->is_hardware() ? "source=hardware" : "source=simulation",
              golden::shown(p.out_root).c_str());
  return true;
}

// Replays what is now on disk (read back, so the files themselves are what is checked) against the
// verified policy, or against each candidate when the architecture has none. The verified
// policy's mismatches (0 without one) in *mismatches; false after printing why not.
bool replay_written(const ProbeRun& p, const ref::MmaPolicy* verified, std::uint64_t* mismatches) {
  std::vector<const ref::MmaPolicy*> policies;
  if (verified) {
    std::printf("replay against the verified policy %s:\n", std::string(verified->name).c_str());
    policies = {verified};
  } else {
    std::printf(
        "compute capability %s has NO verified policy in the emulator (NUMERICS.md 3); mismatches "
        "against each candidate policy (sm90, sm80), for information:\n",
        p.id.compute_capability.c_str());
    policies = {&ref::mma_policy(ref::Arch::sm90), &ref::mma_policy(ref::Arch::sm80)};
  }
  for (const ref::MmaPolicy* policy : policies) {
    std::uint64_t total = 0, dots = 0;
    for (const auto& [name, unused] : p.files) {
      golden::MmavFile back;
      std::string error;
      if (!golden::read_mmav_file((p.dir / name).string(), &back, &error)) {
        std::fprintf(stderr, "probe: reading back %s: %s\n", name.c_str(), error.c_str());
        return false;
      }
      const props::MmavReplay r = props::replay_mmav(back, *policy, p.a.show);
      std::printf("  %-8s %-40s %" PRIu64 " mismatches of %" PRIu64 " dot products\n",
                  std::string(policy->name).c_str(), name.c_str(), r.mismatches, r.dot_products);
      for (const std::string& line : r.details) std::printf("    %s\n", line.c_str());
      total += r.mismatches;
      dots += r.dot_products;
    }
    std::printf("  %s: %" PRIu64 " mismatches of %" PRIu64 " dot products in all\n", std::string(policy->name).c_str(),
                total, dots);
    if (verified) *mismatches = total;
  }
  return true;
}

// The targeted cases one by one, with what NUMERICS.md 1.1 states for each (forms that add C).
void print_targeted(const ProbeRun& p) {
  for (const Variant& v : p.variants) {
    if (!v.scale_d) continue;
    golden::MmavFile back;
    std::string error;
    const std::string name = p.file_name(v, static_cast<int>(golden::ProbeRegime::targeted));
    if (!golden::read_mmav_file((p.dir / name).string(), &back, &error)) continue;
    std::printf("targeted cases (NUMERICS.md 1.1 / 3) of %s, device D[0][0] vs the value NUMERICS.md states:\n",
                golden::mmav_kind_instruction(v.kind));
    const auto& targets = golden::probe_targets();
    for (std::size_t i = 0; i < targets.size() && i < back.cases.size(); ++i) {
      const std::uint32_t got = back.cases[i].d[0];
      std::printf("  %s 0x%08X (NUMERICS.md: 0x%08X)  %s\n", got == targets[i].numerics_d ? "same" : "DIFF", got,
                  targets[i].numerics_d, std::string(targets[i].what).c_str());
    }
  }
}

int run_probe(const ProbeArgs& a) {
  ProbeRun p(a);
  bool no_gpu = false;
  if (!prepare(&p, &no_gpu)) return no_gpu ? kExitNoGpu : kProbeError;
  const GpuIdentity& id = p.id;
  std::printf("probe: %s (compute capability %s, driver %s, CUDA %s), %u cases per regime, seed 0x%016" PRIx64 "\n",
              id.name.c_str(), id.compute_capability.c_str(), id.driver.c_str(), id.cuda.c_str(), a.cases, p.seed);
  if (!p.source->is_hardware())
    std::printf(
        "probe: NOTE: --source sim: D comes from the emulator's sm90 policy; this is NOT a hardware "
        "recording (folder %s)\n",
        p.slug.c_str());
  if (!record_all(&p) || !write_all(p)) return kProbeError;
  const ref::MmaPolicy* verified = verified_policy_for(id.compute_capability);
  std::uint64_t verified_mismatches = 0;
  if (!replay_written(p, verified, &verified_mismatches)) return kProbeError;
  print_targeted(p);
  if (!verified) return 0;
  std::printf("probe: %s\n", verified_mismatches == 0 ? "the device matches the verified policy bit for bit"
                                                      : "MISMATCH: the device differs from the verified policy");
  return verified_mismatches == 0 ? 0 : 1;
}

}  // namespace cmd_probe
}  // namespace w8a16::cli
