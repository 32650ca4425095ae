"""fresh7: hints generated systematically from per-task content pieces and per-level frames
(seeded), labels derived mechanically from the pieces used. Written before revision 5."""
import json, random
rng = random.Random(7)
T, H = [], []
def task(id, bug, problem, program, reference, pieces):
    T.append({"kind": "task", "id": id, "bug": bug, "problem": problem, "program": program, "reference": reference})
    PIECES[id] = pieces
PIECES = {}
task("even-count", "odd test inverted",
     "Given n integers, print how many of them are even.",
     'n = int(input())\na = list(map(int, input().split()))\nprint(sum(1 for x in a if x % 2 == 1))\n',
     'n = int(input())\na = list(map(int, input().split()))\nprint(sum(1 for x in a if x % 2 == 0))\n',
     {"symptom": ["the printed count equals the number of odd values instead", "the count is wrong on almost every test, except when it happens to match"],
      "input": ["for any list that mixes even and odd numbers", "when the list contains more even numbers than odd ones"],
      "state": ["what the program tallies is the other parity class", "the tally it builds counts the wrong group of values"],
      "location": ["the filter inside the generator expression", "the condition that decides which values get counted"],
      "concept": ["a number is even exactly when dividing it by two leaves no remainder", "evenness means remainder zero, not remainder one"],
      "direction": ["count the values whose remainder modulo two is zero", "flip the parity condition so even values are counted"],
      "code": ["x % 2 == 0 is the test to use", "print(sum(1 for x in a if x % 2 == 0))"]})
task("countdown", "range end excluded",
     "Given n >= 1, print the numbers from n down to 1, one per line.",
     'n = int(input())\nfor i in range(n, 1, -1):\n    print(i)\n',
     'n = int(input())\nfor i in range(n, 0, -1):\n    print(i)\n',
     {"symptom": ["the last expected line, 1, never appears", "the output has one line fewer than expected"],
      "input": ["for every n, and for n = 1 nothing at all is printed", "on all inputs, most visibly when n is 1"],
      "state": ["the loop variable stops before it ever takes the value 1", "the program's counter never reaches the final number"],
      "location": ["the stop value passed to range in the for statement", "the header of the only loop"],
      "concept": ["a range's stop value is exclusive, so counting down to 1 needs a stop below 1", "the end of a range is never produced itself"],
      "direction": ["lower the stop value of the countdown by one", "let the loop run one step further down"],
      "code": ["use range(n, 0, -1)", "for i in range(n, 0, -1): print(i)"]})
task("avg-temp", "division by a fixed count",
     "Given n readings, print their average rounded down to an integer.",
     'n = int(input())\na = list(map(int, input().split()))\nprint(sum(a) // 7)\n',
     'n = int(input())\na = list(map(int, input().split()))\nprint(sum(a) // n)\n',
     {"symptom": ["the printed average is far off on most tests", "the result is only right on some tests"],
      "input": ["whenever the number of readings is not 7", "for inputs with fewer or more than seven readings"],
      "state": ["the number of readings that was read is ignored in the computation", "the count read on the first line is never used later"],
      "location": ["the division in the print statement", "the denominator on the last line"],
      "concept": ["an average divides the sum by the number of values, whatever that number is", "the divisor of a mean is the count of values"],
      "direction": ["divide by the number of readings that was read", "use the actual count of readings as the divisor"],
      "code": ["print(sum(a) // n)", "replace 7 with n in the division"]})
task("dedupe-order", "set loses order",
     "Given a line of words, print the words with duplicates removed, keeping the order of first appearance.",
     'words = input().split()\nprint(" ".join(set(words)))\n',
     'words = input().split()\nprint(" ".join(dict.fromkeys(words)))\n',
     {"symptom": ["the right words are printed but often in a different order", "the order of the printed words varies from the expected one"],
      "input": ["for lines with several distinct words", "when a line holds more than one different word"],
      "state": ["the order in which words first appeared is not preserved anywhere", "nothing remembers which word came first"],
      "location": ["the set built inside the join", "the expression that removes the duplicates"],
      "concept": ["a set has no order, so it cannot keep words in order of first appearance", "removing duplicates must not disturb the original order"],
      "direction": ["remove duplicates with a structure that keeps insertion order", "walk the words in order and keep each one the first time it is met"],
      "code": ["dict.fromkeys(words) keeps the order", "print(\" \".join(dict.fromkeys(words)))"]})
task("max-gap", "first difference skipped",
     "Given n >= 2 integers, print the largest absolute difference between two consecutive values.",
     'n = int(input())\na = list(map(int, input().split()))\nbest = 0\nfor i in range(2, n):\n    best = max(best, abs(a[i] - a[i - 1]))\nprint(best)\n',
     'n = int(input())\na = list(map(int, input().split()))\nbest = 0\nfor i in range(1, n):\n    best = max(best, abs(a[i] - a[i - 1]))\nprint(best)\n',
     {"symptom": ["the printed gap is smaller than the expected one on some tests", "some answers are too small, others right"],
      "input": ["when the largest jump is between the first two values", "for inputs such as 1 100 101 where the biggest step comes first"],
      "state": ["the difference between the first two values never enters the running maximum", "the best gap so far never includes the very first step"],
      "location": ["the start of the range in the loop header", "the first argument of range in the for loop"],
      "concept": ["with n values there are n - 1 consecutive pairs, starting with the first and second value", "every consecutive pair counts, including the first one"],
      "direction": ["start the loop at the second element so the first pair is compared", "include the first pair of values in the scan"],
      "code": ["for i in range(1, n):", "change range(2, n) to range(1, n)"]})
task("vowel-count", "y counted as vowel",
     "Given a word, print how many of its letters are vowels (a, e, i, o, u).",
     'w = input().lower()\nprint(sum(1 for c in w if c in "aeiouy"))\n',
     'w = input().lower()\nprint(sum(1 for c in w if c in "aeiou"))\n',
     {"symptom": ["the count printed is too high on some tests", "a few counts are larger than expected"],
      "input": ["for words containing the letter y, such as rhythm or yes", "whenever a y appears in the word"],
      "state": ["the set of letters the program checks against holds one letter too many", "the program's idea of which letters are vowels includes an extra one"],
      "location": ["the string of vowels in the membership test", "the literal the letters are compared with"],
      "concept": ["y is not one of the vowels this problem counts", "only a, e, i, o and u count as vowels here"],
      "direction": ["leave y out of the letters that are counted", "count only the five listed vowels"],
      "code": ["use c in \"aeiou\"", "change \"aeiouy\" to \"aeiou\""]})

KIND_LEVEL = {"symptom": 1, "input": 2, "state": 3, "location": 4, "concept": 5, "direction": 6, "code": 7}
BOUNDARY = {"input": "input_pattern", "state": "state", "location": "location", "concept": "concept", "direction": "direction", "code": "code"}
FRAMES = {
    "symptom": ["{X}.", "Symptom: {x}.", "From the outputs, {x}."],
    "input": ["This shows up {x}.", "The failing cases: {x}.", "Wrong answers come {x}."],
    "state": ["{X}.", "What is going on inside: {x}.", "It seems {x}."],
    "location": ["Check {x}.", "I would inspect {x}.", "Suspect: {x}."],
    "concept": ["{X}.", "Remember that {x}.", "Conceptually, {x}."],
    "direction": ["{X}.", "Suggested change: {x}.", "You can fix this if you {x}."],
    "code": ["Something like: {x}.", "In code: {x}.", "{X}."],
}
OWN = {1: "symptom", 2: "input", 3: "state", 4: "location", 5: "concept", 6: "direction"}
FALLBACK_OWN = {3: "symptom"}  # tasks without a state piece: an L3 hint tells the symptom and an allowed input

def say(kind, pieces):
    x = rng.choice(pieces[kind])
    frame = rng.choice(FRAMES[kind])
    return frame.replace("{X}", x[0].upper() + x[1:]).replace("{x}", x)

n = {}
CROSSING = {1: 2, 2: 2, 3: 1, 4: 1, 5: 1, 6: 1}
CLEAN = {1: 1, 2: 1, 3: 1, 4: 2, 5: 2, 6: 1}
WEIGHT = {"input": 1.0, "state": 1.0, "location": 1.0, "concept": 1.0, "direction": 1.0, "code": 0.6}
for tid, pieces in PIECES.items():
    for level in range(1, 7):
        own = OWN[level] if OWN[level] in pieces else "input"
        higher = [k for k in pieces if KIND_LEVEL[k] > level]
        kinds = []
        while len(kinds) < CROSSING[level]:
            # the boundaries just above the level are the ones a hint crosses most easily
            k = rng.choices(higher, [WEIGHT[h] / (KIND_LEVEL[h] - level) for h in higher])[0]
            if k not in kinds or len(set(higher)) == 1:
                kinds.append(k)
        for kind in [None] * CLEAN[level] + kinds:
            parts = [say(own, pieces)]
            broken = []
            if level >= 2 and rng.random() < 0.5:
                parts.insert(0, say("symptom", pieces))
            if kind:
                parts.append(say(kind, pieces))
                broken.append(BOUNDARY[kind])
            n[level] = n.get(level, 0) + 1
            H.append({"kind": "hint", "id": f"V{level}-{n[level]:02d}", "task": tid, "level": level,
                      "text": " ".join(parts), "broken": broken, "source": "generated"})

with open(__file__.replace(".py", ".jsonl"), "w") as f:
    for r in T + H:
        f.write(json.dumps(r) + "\n")
from collections import Counter
print(len(H), sum(1 for h in H if h["broken"]), Counter(b for h in H for b in h["broken"]))
