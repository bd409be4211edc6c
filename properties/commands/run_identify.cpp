// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check identify`: which contract of the family (NUMERICS.md 2.4) each entry point keeps,
// body by body, from the probes of properties/identify.hpp run on a backend (a GPU, a --module
// file, or the simulation with its stand-ins).
#include "run_identify.hpp"

#include <algorithm>
#include <cstdio>

#include "exit_status.hpp"
#include "gpu_identity.hpp"
#include "identify_report.hpp"
#include "w8a16/device/module_abi.hpp"
#include "w8a16/golden/files.hpp"
#include "w8a16/properties/case_runner.hpp"
#include "w8a16/properties/identify.hpp"

namespace w8a16::cli {
namespace cmd_identify {

int usage(const std::string& message) { return usage_error("identify", message); }

int run_identify(const IdentifyArgs& a) {
  std::vector<golden::EntryPoint> wanted;
  std::string error;
  if (!parse_entry_args(a.entries, &wanted, &error)) return usage(error);
  std::vector<device::Body> bodies;
  for (const std::string& name : a.bodies) {
    bool found = false;
    for (device::Body b : device::kAllBodies)
      if (name == device::body_name(b)) bodies.push_back(b), found = true;
    if (!found)
      return usage("unknown --body " + golden::quote(name) +
                   " (e.g. m32_skinny; device/include/w8a16/device/bodies.def)");
  }
  std::string note;
  if (!begin_report(a.json.get(), &error)) return usage(error);
  if (!a.write_contract.empty() && !golden::check_writable(a.write_contract, &error))
    return usage("--write-contract " + golden::shown(a.write_contract) + ": " + error);
  bool no_gpu = false;
  auto backend = make_backend(a.backend, &note, &error, a.module, 0, &no_gpu);
  if (!backend) return backend_refused("identify", error, no_gpu);
  // By default every entry point the module holds; one asked for by name must be there
  // (docs/KERNEL_ABI.md 1.2: a module without an sm_90a cubin lacks the packed entry's symbols).
  if (wanted.empty()) wanted = entries_the_module_holds(backend->registry(), "identify");
  std::vector<device::Entry> entries;
  for (golden::EntryPoint e : wanted) entries.push_back(props::to_device_entry(e));
  if (!check_module(*backend, entries, &error)) return usage(error);

  std::printf("w8a16check identify: backend %s; seed %llu\n", note.c_str(), static_cast<unsigned long long>(a.seed));
  std::fputs(identity_text(run_identity(*backend)).c_str(), stdout);
  std::printf(
      "candidates: tensor-core bodies: the K order determined by order probes, then %zu per order (nan x fold "
      "fma/mul-add/prescale at step, prescale at end x bias 0..62 x scales fp32/bf16; period end with fma or "
      "mul-add is defined only for per-channel scales and is never named); GEMV bodies: %zu (nan x lanes 32..1024 "
      "x chunk 1..128 x scale x mac x tree xor/down: the two trees give lane 0 the same sum and are always named "
      "together), split probes added, K from 4096 to 262144, while the kept candidates differ in more than their "
      "tree; every kept candidate then confirmed at other M, each case twice\n",
      props::tc_candidates().size(), props::gemv_space().size());
  std::vector<props::EntryProbes> plan = props::identify_plan(backend->registry(), backend->limits(), wanted, a.seed);
  if (!bodies.empty()) {
    bool any = false;
    for (props::EntryProbes& ep : plan) {
      props::keep_bodies(&ep, bodies);
      any = any || !ep.bodies.empty();
    }
    if (!any) return usage("no entry point asked for dispatches any body named by --body");
    plan.erase(std::remove_if(plan.begin(), plan.end(), [](const props::EntryProbes& ep) { return ep.bodies.empty(); }),
               plan.end());
  }
  const auto launcher = make_launcher(*backend, a.module, 0, false, a.deadlines);
  bool hung = false;
  const std::vector<props::EntryVerdict> verdicts = props::identify(*launcher, plan, a.threads, &hung,
                                                                    [](const std::string& what) {
                                                                      std::fprintf(stderr, "identify: probing %s\n",
                                                                                   what.c_str());
                                                                    });
  std::fputs(props::identify_text(verdicts).c_str(), stdout);

  bool pass = !hung && verdicts.size() == plan.size();
  for (const props::EntryVerdict& ev : verdicts) pass = pass && ev.ok();
  int status = pass ? kExitPass : kExitFail;
  if (!a.json->path.empty()) {
    const IdentifyReportContext ctx{backend->name(), a.seed, hung, pass};
    if (!finish_report(a.json.get(), identify_json_report(verdicts, ctx), &error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      status = kExitUsage;
    }
  }
  if (!a.write_contract.empty()) {
    std::string text, why;
    if (!hung && props::determined_contract(verdicts, &text, &why)) {
      if (!golden::write_file_atomic(a.write_contract, text, &error)) {
        std::fprintf(stderr, "identify: --write-contract %s: %s\n", golden::shown(a.write_contract).c_str(),
                     error.c_str());
        status = kExitUsage;
      } else {
        std::printf("contract written to %s%s%s\n", a.write_contract.c_str(), why.empty() ? "" : ": ", why.c_str());
      }
    } else {
      std::printf("--write-contract: %s\n",
                  hung ? "nothing written: the run stopped at a launch that hung" : why.c_str());
    }
  }
  std::fputs(verdict_line(pass ? "PASS" : "FAIL", pass   ? "every entry point keeps one contract in every body"
                                                  : hung ? "stopped at a launch that hung"
                                                         : "")
                 .c_str(),
             stdout);
  return status;
}

}  // namespace cmd_identify
}  // namespace w8a16::cli
