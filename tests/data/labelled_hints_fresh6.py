"""fresh6: hints generated systematically from per-task content pieces and per-level frames
(seeded), labels derived mechanically from the pieces used. Written before revision 4."""
import json, random
rng = random.Random(2024)
T, H = [], []
def task(id, bug, problem, program, reference, pieces):
    T.append({"kind": "task", "id": id, "bug": bug, "problem": problem, "program": program, "reference": reference})
    PIECES[id] = pieces
PIECES = {}
task("digital-root", "one round of digit sums",
     "Given a positive integer n, repeatedly replace it by the sum of its digits until a single digit remains, and print that digit.",
     'n = int(input())\nif n >= 10:\n    n = sum(int(d) for d in str(n))\nprint(n)\n',
     'n = int(input())\nwhile n >= 10:\n    n = sum(int(d) for d in str(n))\nprint(n)\n',
     {"symptom": ["the printed number sometimes has two digits, though the answer always has one", "some outputs are larger than 9"],
      "input": ["for numbers whose digit sum is itself 10 or more, such as 99 or 9875", "when the digits add up to a two-digit number"],
      "state": ["the program sums the digits a single time and does not keep reducing the intermediate result", "the intermediate sum is never fed back into the process"],
      "location": ["the if statement that sums the digits", "the conditional near the top that replaces n with its digit sum"],
      "concept": ["the digital root is reached only when a single digit is left, which can take several rounds of summing", "a two-digit digit sum is not yet the answer; it still has to be reduced"],
      "direction": ["keep summing the digits as long as the number has more than one digit", "repeat the digit-sum step until the value drops below 10"],
      "code": ["while n >= 10: n = sum(int(d) for d in str(n))", "replace `if n >= 10:` with `while n >= 10:`"]})
task("month-days", "February never 29",
     "Given a year y and a month m, print the number of days in that month of the Gregorian calendar.",
     'y, m = map(int, input().split())\ndays = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]\nprint(days[m - 1])\n',
     'y, m = map(int, input().split())\ndays = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]\nif m == 2 and (y % 4 == 0 and y % 100 != 0 or y % 400 == 0):\n    print(29)\nelse:\n    print(days[m - 1])\n',
     {"symptom": ["one of the printed day counts is one too small", "the program prints 28 where 29 is expected"],
      "input": ["for February of years such as 2024 or 2000", "when the month is 2 and the year is a leap year"],
      "state": ["the year that was read is never used afterwards", "the program reads the year but forgets about it when it picks the answer"],
      "location": ["the lookup into the days list on the last line", "the final print that indexes the table of month lengths"],
      "concept": ["February has 29 days in leap years, so a month's length depends on the year as well", "a month's length is not fixed: for February it is a function of the year"],
      "direction": ["add one day for February whenever the year is a leap year", "compute February's length from the year instead of taking it from the table"],
      "code": ["if m == 2 and y % 4 == 0: print(29)", "days[1] = 29 if y % 4 == 0 else 28"]})
task("running-balance", "balance printed before the update",
     "Given a starting balance b and n transactions (one integer per line, positive or negative), print the balance after each transaction.",
     'b = int(input())\nn = int(input())\nfor _ in range(n):\n    t = int(input())\n    print(b)\n    b += t\n',
     'b = int(input())\nn = int(input())\nfor _ in range(n):\n    t = int(input())\n    b += t\n    print(b)\n',
     {"symptom": ["each line of output matches the expected line just before it", "the first printed value is the opening balance, which the expected output never shows"],
      "input": ["on every input with at least one nonzero transaction", "for inputs where some transaction is not zero"],
      "state": ["the balance is reported before it has taken the current transaction into account", "the value shown is the balance from before the latest change"],
      "location": ["the two statements inside the for loop", "the print inside the loop body"],
      "concept": ["each reported balance must already include the transaction on that line", "the balance after a transaction is the one to report, never the one before it"],
      "direction": ["apply each transaction before reporting the balance", "swap the order of updating and printing"],
      "code": ["b += t must come before print(b)", "move b += t above the print"]})
task("closest-pair", "neighbours in input order",
     "Given n >= 2 integers, print the smallest absolute difference between any two of them.",
     'n = int(input())\na = list(map(int, input().split()))\nbest = min(abs(a[i + 1] - a[i]) for i in range(n - 1))\nprint(best)\n',
     'n = int(input())\na = sorted(map(int, input().split()))\nbest = min(a[i + 1] - a[i] for i in range(n - 1))\nprint(best)\n',
     {"symptom": ["the printed difference is larger than the true minimum on some tests", "the answer is too big on some tests"],
      "input": ["for lists that are not in sorted order, such as 1 10 2", "when the two closest numbers are not next to each other in the input"],
      "state": ["only differences between neighbours in the given order are ever looked at", "the program never knows which values are close in size, only which are close in position"],
      "location": ["the generator expression that computes best", "the single min computation over neighbouring pairs"],
      "concept": ["the closest pair of values is adjacent once the values are sorted, but not necessarily before", "closeness in value, not in position, is what matters"],
      "direction": ["sort the numbers before comparing neighbours", "put the values in increasing order first, then take the smallest neighbouring gap"],
      "code": ["a.sort() before computing best", "a = sorted(map(int, input().split())) on the second line"]})
task("password", "length bound exclusive",
     "A password is valid if it has at least 8 characters, at least one digit and at least one uppercase letter. Print VALID or INVALID.",
     'p = input()\nok = len(p) > 8 and any(c.isdigit() for c in p) and any(c.isupper() for c in p)\nprint("VALID" if ok else "INVALID")\n',
     'p = input()\nok = len(p) >= 8 and any(c.isdigit() for c in p) and any(c.isupper() for c in p)\nprint("VALID" if ok else "INVALID")\n',
     {"symptom": ["INVALID is printed for some passwords the expected output calls VALID", "some answers are INVALID where VALID is expected"],
      "input": ["for passwords of exactly eight characters", "when the password is exactly as long as the minimum"],
      "location": ["the length comparison in the ok expression", "the first condition of the long boolean expression"],
      "concept": ["at least 8 includes 8 itself", "the minimum length is inclusive"],
      "direction": ["make the length test accept a length equal to the minimum", "relax the length condition by one"],
      "code": ["use len(p) >= 8", "change > to >= in the length test"]})
task("rotate", "rotated the wrong way",
     "Given an n x n grid of tokens, print it rotated 90 degrees clockwise.",
     'n = int(input())\nm = [input().split() for _ in range(n)]\nr = [[m[j][n - 1 - i] for j in range(n)] for i in range(n)]\nfor row in r:\n    print(" ".join(row))\n',
     'n = int(input())\nm = [input().split() for _ in range(n)]\nr = [[m[n - 1 - j][i] for j in range(n)] for i in range(n)]\nfor row in r:\n    print(" ".join(row))\n',
     {"symptom": ["the printed grid is rotated the wrong way", "the output grid is the expected one turned by 180 degrees"],
      "input": ["for every grid larger than 1 x 1", "on all inputs except the 1 x 1 grids"],
      "location": ["the nested list comprehension that builds r", "the index expression m[j][n - 1 - i]"],
      "concept": ["a clockwise turn sends row i of the original to column n - 1 - i of the result", "rotating clockwise means the first column, read from bottom to top, becomes the first row"],
      "direction": ["read each new row from a column of the original going from the bottom row upwards", "take the original rows in reverse order when building each new row"],
      "code": ["r = [[m[n - 1 - j][i] for j in range(n)] for i in range(n)]", "use zip(*m[::-1])"]})

KIND_LEVEL = {"symptom": 1, "input": 2, "state": 3, "location": 4, "concept": 5, "direction": 6, "code": 7}
BOUNDARY = {"input": "input_pattern", "state": "state", "location": "location", "concept": "concept", "direction": "direction", "code": "code"}
FRAMES = {
    "symptom": ["{X}.", "On some hidden tests {x}.", "What we observe: {x}."],
    "input": ["The failure shows up {x}.", "It fails {x}.", "Problems appear {x}."],
    "state": ["{X}.", "Looking at what the solution tracks: {x}.", "Internally, {x}."],
    "location": ["The suspicious region is {x}.", "Look at {x}.", "The fault is most likely in {x}."],
    "concept": ["{X}.", "Keep in mind that {x}.", "The key point: {x}."],
    "direction": ["{X}.", "A fix: {x}.", "To repair it, {x}."],
    "code": ["Concretely: {x}.", "For example, {x}.", "{X}."],
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
            H.append({"kind": "hint", "id": f"G{level}-{n[level]:02d}", "task": tid, "level": level,
                      "text": " ".join(parts), "broken": broken, "source": "generated"})

with open(__file__.replace(".py", ".jsonl"), "w") as f:
    for r in T + H:
        f.write(json.dumps(r) + "\n")
from collections import Counter
print(len(H), sum(1 for h in H if h["broken"]), Counter(b for h in H for b in h["broken"]))
