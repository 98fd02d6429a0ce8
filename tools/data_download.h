// `minrnn data download ID...` and the `--download` of `train` and `sweep`: the command-line side
// of fetch/dataset_download.h (progress on stderr, Ctrl-C, messages, exit statuses).
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace minrnn::cli {

// Registers `download` under `minrnn data`.
void add_data_download_command(CLI::App& data_cmd);

// Fetches those of `datasets` (ids or paths, as configs name them) that are missing; `command`
// ("minrnn train") names the caller in messages. A missing path or unknown id throws naming it;
// a Ctrl-C / SIGTERM throws ExitError 75 (the .part is kept for the next run).
void download_missing_datasets(const std::vector<std::string>& datasets,
                               const std::string& command);

}  // namespace minrnn::cli
