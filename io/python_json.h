// JSON as Python's `json` module writes it: like standard JSON, plus the bare tokens Infinity,
// -Infinity and NaN (json.dumps writes float('inf') so). Minari stores spaces and Gymnasium env
// specs this way (an observation space's bounds are -Infinity/Infinity; Hopper's healthy_z_range
// default is (0.7, inf)).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace minrnn::io {

// Parses `text`; the non-standard tokens become the strings "Infinity", "-Infinity", "NaN" (read
// them with json_number). Throws std::invalid_argument naming `what` on a syntax error, and on
// arrays or objects nested deeper than kMaxJsonDepth: no metadata needs that, and the recursive
// code that writes a document back (dump_python_json, an error message) would run out of stack.
constexpr int kMaxJsonDepth = 100;
nlohmann::json parse_python_json(const std::string& text, const std::string& what);

// A number of a parse_python_json document: a JSON number, or one of the three strings above.
// Throws std::invalid_argument naming `what` and showing the value otherwise.
double json_number(const nlohmann::json& value, const std::string& what);
bool is_json_number(const nlohmann::json& value);

// A JSON file minrnn writes (done.json, eval.json, a sweep's status) as it reads one back: null
// where it is missing, not a regular file, or not (yet) whole JSON — the reader treats it as
// absent.
nlohmann::json read_json_or_null(const std::string& path);
// A JSON file that must be there and whole (a sweep's job.json, a run's eval.json): its document,
// or std::invalid_argument beginning with the path — read_input_file's (no such `what`, a
// directory, a FIFO, too large) or "PATH: not valid JSON (...)".
nlohmann::json read_json(const std::string& path, const std::string& what);

// `value` as Python's json.dumps would write it (", " and ": " separators, Infinity tokens for the
// strings above), so Python reads back the same objects.
std::string dump_python_json(const nlohmann::json& value);

}  // namespace minrnn::io
