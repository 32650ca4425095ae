"""fresh9: hints generated systematically from per-task content pieces and per-level frames
(seeded), labels derived mechanically from the pieces used. Written before revision 5."""
import json, random
rng = random.Random(99)
T, H = [], []
def task(id, bug, problem, program, reference, pieces):
    T.append({"kind": "task", "id": id, "bug": bug, "problem": problem, "program": program, "reference": reference})
    PIECES[id] = pieces
PIECES = {}
task("triangle-area", "integer division of the area",
     "Given the base and height of a triangle (integers), print its area with one digit after the decimal point.",
     'b, h = map(int, input().split())\nprint(f"{b * h // 2:.1f}")\n',
     'b, h = map(int, input().split())\nprint(f"{b * h / 2:.1f}")\n',
     {"symptom": ["some printed areas end in .0 where the expected value ends in .5", "a few areas come out half a unit too small"],
      "input": ["when base times height is an odd number, such as 3 5", "for inputs whose product is odd"],
      "state": ["the half that the division should keep is thrown away before printing", "the program works with a whole-number area and loses the fraction"],
      "location": ["the division inside the f-string", "the expression formatted on the only print line"],
      "concept": ["half of an odd product is never a whole number, so the area can end in .5", "an area is a real number, not an integer"],
      "direction": ["divide by two without discarding the fractional part", "use true division when halving the product"],
      "code": ["b * h / 2", "print(f\"{b * h / 2:.1f}\")"]})
task("longest-word", "first of the longest ignored on ties",
     "Given a line of words, print the longest word; if several are equally long, print the first of them.",
     'words = input().split()\nbest = ""\nfor w in words:\n    if len(w) >= len(best):\n        best = w\nprint(best)\n',
     'words = input().split()\nbest = ""\nfor w in words:\n    if len(w) > len(best):\n        best = w\nprint(best)\n',
     {"symptom": ["a different word of the right length is printed on some tests", "the printed word has the maximal length but is not the expected one"],
      "input": ["when two words share the greatest length", "for lines such as dog cat where the longest words tie"],
      "state": ["the remembered best word gets replaced by every later word of equal length", "the program keeps the last of the longest words instead of holding on to the first"],
      "location": ["the length comparison inside the loop", "the if condition that decides whether to replace best"],
      "concept": ["on a tie the earliest word wins, so an equally long later word must not take its place", "only a strictly longer word beats the current best"],
      "direction": ["replace the best word only when the new one is strictly longer", "make the comparison strict so ties keep the earlier word"],
      "code": ["if len(w) > len(best):", "use > instead of >= in the comparison"]})
task("pos-sum", "negatives included",
     "Given n integers, print the sum of the positive ones.",
     'n = int(input())\nprint(sum(int(x) for x in input().split()))\n',
     'n = int(input())\nprint(sum(int(x) for x in input().split() if int(x) > 0))\n',
     {"symptom": ["the printed sum is smaller than expected on some tests", "on several tests the result is too low"],
      "input": ["for lists containing negative numbers", "whenever some value is below zero"],
      "state": ["every value read goes into the total, whatever its sign", "nothing stops a negative value from entering the sum"],
      "location": ["the generator inside the call to sum", "the single summing expression on the last line"],
      "concept": ["only values greater than zero belong to the sum", "negative values and zeros are not part of the requested total"],
      "direction": ["skip values that are not positive when adding", "add a filter so only positive values are summed"],
      "code": ["add if int(x) > 0 to the generator", "sum(int(x) for x in input().split() if int(x) > 0)"]})
task("bracket-pairs", "closing count not checked at the end",
     "Given a string of ( and ), print the number of matched pairs in it (each ( matched with a later unused )).",
     's = input()\nopen_ = 0\npairs = 0\nfor ch in s:\n    if ch == "(":\n        open_ += 1\n    else:\n        pairs += 1\nprint(pairs)\n',
     's = input()\nopen_ = 0\npairs = 0\nfor ch in s:\n    if ch == "(":\n        open_ += 1\n    elif open_ > 0:\n        open_ -= 1\n        pairs += 1\nprint(pairs)\n',
     {"symptom": ["the printed number of pairs is too large on some tests", "some counts exceed the expected number of pairs"],
      "input": ["for strings that start with a closing bracket, like )(", "when there are more closing than opening brackets"],
      "state": ["the number of unmatched opening brackets is never used when a closing one arrives", "the count of currently open brackets is never decreased"],
      "location": ["the else branch of the loop", "the branch that handles a closing bracket"],
      "concept": ["a closing bracket forms a pair only if an earlier opening bracket is still unmatched", "each opening bracket can be used by at most one closing bracket"],
      "direction": ["count a pair only while some opening bracket is still open, and close one of them", "match each closing bracket against the open ones and ignore it when none is left"],
      "code": ["elif open_ > 0: open_ -= 1; pairs += 1", "guard the else branch with open_ > 0"]})
task("weekday", "offset from the wrong day",
     "Day 1 of a year is a Monday. Given a day number d (1..365), print the weekday name.",
     'd = int(input())\nnames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]\nprint(names[d % 7])\n',
     'd = int(input())\nnames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]\nprint(names[(d - 1) % 7])\n',
     {"symptom": ["every printed weekday is one day later than expected", "the weekday printed is shifted by one"],
      "input": ["for every day number, for example d = 1", "on all inputs, including the first day of the year"],
      "state": ["day numbers are treated as if counting started at zero", "the program's day count is off by the one day it starts from"],
      "location": ["the index into names on the last line", "the subscript used on the list of names"],
      "concept": ["day 1 is the first entry of the week, so day numbers must be shifted down by one before taking the remainder", "day numbering starts at 1 while list positions start at 0"],
      "direction": ["subtract one from the day number before reducing it modulo 7", "shift the day number down by one before indexing"],
      "code": ["names[(d - 1) % 7]", "print(names[(d - 1) % 7])"]})
task("median3", "middle of unsorted values",
     "Given three integers, print the median (the middle value when sorted).",
     'a = list(map(int, input().split()))\nprint(a[1])\n',
     'a = sorted(map(int, input().split()))\nprint(a[1])\n',
     {"symptom": ["the printed value is sometimes the smallest or the largest of the three", "on some tests the answer is not the middle value"],
      "input": ["when the three numbers are not given in increasing order", "for inputs such as 3 1 2"],
      "state": ["the program never finds out the order of the three values", "nothing in the program knows which value is the middle one"],
      "location": ["the list built on the first line", "the index 1 read in the print"],
      "concept": ["the median is the middle of the sorted order, not of the input order", "position in the input says nothing about rank"],
      "direction": ["sort the three values before picking the middle one", "put the numbers in order first"],
      "code": ["a = sorted(map(int, input().split()))", "print(sorted(a)[1])"]})

KIND_LEVEL = {"symptom": 1, "input": 2, "state": 3, "location": 4, "concept": 5, "direction": 6, "code": 7}
BOUNDARY = {"input": "input_pattern", "state": "state", "location": "location", "concept": "concept", "direction": "direction", "code": "code"}
FRAMES = {
    "symptom": ["{X}.", "Result check: {x}.", "Looking at the outputs, {x}."],
    "input": ["The trouble appears {x}.", "Failing inputs: {x}.", "You will see it {x}."],
    "state": ["{X}.", "State-wise, {x}.", "The underlying issue is that {x}."],
    "location": ["Inspect {x}.", "The bug lives in {x}.", "Focus on {x}."],
    "concept": ["{X}.", "Bear in mind that {x}.", "Observe that {x}."],
    "direction": ["{X}.", "Fix: {x}.", "The change to make: {x}."],
    "code": ["E.g. {x}.", "Code: {x}.", "{X}."],
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
            H.append({"kind": "hint", "id": f"Z{level}-{n[level]:02d}", "task": tid, "level": level,
                      "text": " ".join(parts), "broken": broken, "source": "generated"})

with open(__file__.replace(".py", ".jsonl"), "w") as f:
    for r in T + H:
        f.write(json.dumps(r) + "\n")
from collections import Counter
print(len(H), sum(1 for h in H if h["broken"]), Counter(b for h in H for b in h["broken"]))
