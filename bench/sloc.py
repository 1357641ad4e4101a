"""Source lines as the benchmarks count them (bench/paper's Fig. 6, bench/peers): non-blank lines after
removing // and /* */ comments (strings kept, so comment markers inside them stay); a line with code and
a trailing comment counts. hash_comments: '#' starts a comment instead (a machinefile). `#ifdef
FIR_SIMULATED_GPU` blocks (the simulator's hook, not the programmer's code) are not counted."""
import re


def code_lines(path, hash_comments=False):
    text = re.sub(r"#ifdef FIR_SIMULATED_GPU\n.*?#endif\n", "", open(path).read(), flags=re.S)
    if hash_comments:
        return sum(1 for line in text.splitlines() if line.split("#", 1)[0].strip())
    pattern = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|/\*.*?\*/|//[^\n]*', re.S)

    def strip(match):
        token = match.group(0)
        if token.startswith("/*"):
            return "\n" * token.count("\n")
        return "" if token.startswith("//") else token

    return sum(1 for line in pattern.sub(strip, text).splitlines() if line.strip())
