// `minrnn data inspect`'s text (tools/data_inspect_text.h).
#include "tools/data_inspect_text.h"

#include <cstdio>
#include <string>

namespace minrnn::cli {
namespace inspect_text {  // named: the tools build as one unit

void print_minari(const nlohmann::json& m) {
  std::printf("minari             %s (minari_version %s, %s)\n",
              m["dataset_id"].get<std::string>().c_str(),
              m["minari_version"].get<std::string>().c_str(),
              m["metadata"].get<std::string>().empty() ? "no metadata.json"
                                                       : m["metadata"].get<std::string>().c_str());
  for (const char* key : {"env_spec", "eval_env_spec"}) {
    std::printf("%-19s%s\n", key, m[key].is_null() ? "(none)" : m[key].get<std::string>().c_str());
  }
  if (!m["ref_min_score"].is_null()) {
    std::printf("ref scores         ref_min_score %g, ref_max_score %g\n",
                m["ref_min_score"].get<double>(), m["ref_max_score"].get<double>());
  } else {
    std::printf("ref scores         (none in metadata.json)\n");
  }
}

// Where the data comes from: its file, environment, Minari record, and a note on a look-alike.
void print_origin(const nlohmann::json& j) {
  std::printf("source             %s (%s)\n", j["source"].get<std::string>().c_str(),
              j["format"].get<std::string>().c_str());
  if (!j["env_id"].is_null()) {
    std::printf("environment        %s (Gymnasium v%d semantics, from %s)\n",
                j["env_id"].get<std::string>().c_str(), j["env_version"].get<int>(),
                j["env_source"].get<std::string>().c_str());
    if (j["env_name"].get<std::string>()[0] == '{')
      std::printf("                   %s\n", j["env_name"].get<std::string>().c_str());
  } else {
    std::printf("environment        %s\n",
                j["env"].is_null() ? "unknown" : j["env"].get<std::string>().c_str());
  }
  if (j.contains("minari")) print_minari(j["minari"]);
  // A note where `minrnn collect` made the file: asked for, not damaged.
  if (!j["not_the_published_file"].is_null())
    std::printf("%s            %s\n", j["collected_here"].get<bool>() ? "note   " : "warning",
                j["not_the_published_file"].get<std::string>().c_str());
}

// Its shape: dims, steps, episodes and how they end.
void print_episodes(const nlohmann::json& j) {
  std::printf("dims               obs %d, act %d\n", j["obs_dim"].get<int>(),
              j["act_dim"].get<int>());
  std::printf("steps              %lld (fingerprint %s)\n", j["steps"].get<long long>(),
              j["fingerprint"].get<std::string>().c_str());
  std::printf("episodes           %lld (terminals %lld, timeouts %lld)\n",
              j["episodes"].get<long long>(), j["terminals"].get<long long>(),
              j["timeouts"].get<long long>());
  if (j["terminal_and_timeout"].get<int64_t>() > 0) {
    const long long both = j["terminal_and_timeout"].get<long long>();
    std::printf(
        "warning            %lld step%s both terminals and timeouts set (D4RL sets one):\n"
        "                   each ends its episode, counted as a terminal\n",
        both, both == 1 ? " has" : "s have");
  }
  const long long dropped = j["dropped_tail_steps"].get<long long>();
  if (dropped > 0) {
    std::printf("dropped tail       %lld steps (an unfinished last episode)\n", dropped);
  } else {
    std::printf("dropped tail       none (the last episode ends)\n");
  }
  const auto& len = j["episode_length"];
  std::printf("episode length     min %lld, mean %.1f, max %lld\n", len["min"].get<long long>(),
              len["mean"].get<double>(), len["max"].get<long long>());
  if (!j["episodes_over_time_limit"].is_null() &&
      j["episodes_over_time_limit"].get<int64_t>() > 0) {
    const long long over = j["episodes_over_time_limit"].get<long long>();
    std::printf(
        "warning            %lld episode%s longer than the %d-step time limit: an episode "
        "boundary\n"
        "                   the file does not mark (terminals|timeouts), e.g. where two datasets\n"
        "                   were joined; sequence training reads each as one episode\n",
        over, over == 1 ? "" : "s", j["time_limit"].get<int>());
  }
}

// Its values: returns (normalized where the env is known), what else it holds, the load's cost.
void print_values(const nlohmann::json& j) {
  auto num = [](const nlohmann::json& v) { return v.get<double>(); };
  if (const long long outside = j["actions_outside_unit_box"].get<long long>(); outside > 0) {
    std::printf(
        "warning            %lld action value%s outside [-1, 1], the envs' action space: the\n"
        "                   policy's tanh head cannot output %s (a dataset of raw torques?)\n",
        outside, outside == 1 ? "" : "s", outside == 1 ? "it" : "them");
  }
  const auto& ret = j["return"];
  std::printf("return             min %.2f, mean %.2f, max %.2f (std %.2f)\n", num(ret["min"]),
              num(ret["mean"]), num(ret["max"]), num(ret["std"]));
  if (!j["normalized_return"].is_null()) {
    const auto& n = j["normalized_return"];
    std::printf("normalized return  min %.2f, mean %.2f, max %.2f (0 = %g, 100 = %g: %s)\n",
                num(n["min"]), num(n["mean"]), num(n["max"]), num(n["ref_min"]), num(n["ref_max"]),
                n["ref_source"].get<std::string>().c_str());
    if (j["returns_past_reference"].get<bool>()) {
      std::printf(
          "warning            returns more than ten times the expert's from the reference\n"
          "                   scores: rewards of another scale (scaled, summed, in other "
          "units?)\n");
    }
  } else {
    std::printf("normalized return  n/a (environment unknown, no reference scores)\n");
  }
  std::printf("next_observations  %s\n", j["next_observations"].get<bool>() ? "yes" : "no");
  std::printf("infos              %s\n", j["infos"].empty() ? "none" : j["infos"].dump().c_str());
  std::printf("metadata           %s\n",
              j["metadata"].empty() ? "none" : j["metadata"].dump().c_str());
  std::printf("load               %.3f s, peak RSS %.0f MiB (before load %.0f MiB)\n",
              num(j["load_seconds"]), num(j["peak_rss_mib"]["after_load"]),
              num(j["peak_rss_mib"]["before_load"]));
}

}  // namespace inspect_text

void print_inspect_text(const nlohmann::json& j) {
  using namespace inspect_text;
  print_origin(j);
  print_episodes(j);
  print_values(j);
}

}  // namespace minrnn::cli
