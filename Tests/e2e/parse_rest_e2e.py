"""parse_rest against a galleryd test server: a custom class's objects created, queried, updated
(with Increment) and deleted as the library sends them, its schema read with the master key, a
Relation added to and queried through a fetched object (`$relatedTo`, also of an object the app's
keys may not read), a view over photos queried, and a write to the view refused with Parse's 119.

PyPI's `parse_rest` (0.2.20141004, 2014) is Python 2 only (`import core`); `qs-parse-rest` is the
same library (ParsePy) kept up for Python 3, imported as `parse_rest`, and reads PARSE_API_ROOT.

Usage: parse_rest_e2e.py BASE_URL APP_ID REST_KEY MASTER_KEY PHOTO_COUNT — prints {"ok": true, …}
and exits 0 on success.
"""
import json
import os
import sys

base, app_id, rest_key, master_key, photo_count = sys.argv[1:6]
os.environ["PARSE_API_ROOT"] = base + "/parse"

from parse_rest.connection import MasterKey, register  # noqa: E402 (reads PARSE_API_ROOT)
from parse_rest.core import ParseError  # noqa: E402
from parse_rest.datatypes import Object  # noqa: E402

register(app_id, rest_key)


class GameScore(Object):
    pass


class Resource(Object):
    pass


class League(Object):
    pass


def expect(condition, message):
    if not condition:
        print(json.dumps({"ok": False, "failed": message}))
        sys.exit(1)


# The schema, as the master key reads it (the test made the class with public permissions).
with MasterKey(master_key):
    schema = GameScore.schema()
expect(schema.get("fields", {}).get("score", {}).get("type") == "Number", "schema: %r" % schema)

# Create, get, update (Increment, then a save of changed fields), query, count, delete.
score = GameScore(score=1337, playerName="Sean Plott", cheatMode=False, skills=["pwnage", "flying"])
score.save()
expect(score.objectId and score.createdAt, "create: %r" % score.__dict__)
score.increment("score")
fetched = GameScore.Query.get(objectId=score.objectId)
expect(fetched.score == 1338 and fetched.playerName == "Sean Plott", "get after Increment: %r" % fetched.__dict__)
fetched.playerName = "Kim"
fetched.cheatMode = True
fetched.save()
other = GameScore(score=10, playerName="Lee", cheatMode=False, skills=[])
other.save()
high = list(GameScore.Query.filter(score__gte=1000).order_by("score", descending=True).limit(5))
expect([s.playerName for s in high] == ["Kim"] and high[0].cheatMode is True, "query: %r" % [s.__dict__ for s in high])
expect(GameScore.Query.filter(playerName__in=["Kim", "Lee"]).count() == 2, "count")
both = list(GameScore.Query.all().order_by("score").keys("score"))
expect([s.score for s in both] == [10, 1338], "order/keys: %r" % [s.__dict__ for s in both])

# A Relation, as parse_rest sends it: AddRelation, then a fetched object's Relation field (which
# names the related class, so no schema read with the master key is needed) queried with $relatedTo.
league = League(name="open")
league.save()
league.relation("scores").add([fetched, other])
opened = League.Query.get(objectId=league.objectId)
expect(getattr(opened, "scores", None) is not None, "a fetched object's Relation field: %r" % opened.__dict__)
scores = opened.relation("scores")
expect(scores.relatedClassName == "GameScore", "Relation className: %r" % scores.__dict__)
expect(sorted(s.playerName for s in scores.query()) == ["Kim", "Lee"], "$relatedTo")
# A league only the master key reads: its relation relates nothing to the app's keys.
with MasterKey(master_key):
    closed = League(name="closed", ACL={})
    closed.save()
    closed.relation("scores").add([other])
    expect([s.playerName for s in closed.relation("scores").query()] == ["Lee"], "$relatedTo, master key")
expect(list(closed.relation("scores").query()) == [], "$relatedTo of an object the caller may not read")

fetched.delete()
expect(GameScore.Query.filter(playerName="Kim").count() == 0, "delete")

# The view: the app's keys alone see the photos the operator made public, under the view's names.
resources = list(Resource.Query.all().order_by("createdAt", descending=True).limit(20))
expect(len(resources) == int(photo_count), "view: %d records" % len(resources))
for resource in resources:
    expect(resource.filename and resource.thumbnailURLString.startswith("http"), "view record: %r" % resource.__dict__)
expect(Resource.Query.filter(filename=resources[0].filename).count() == 1, "view where")
try:
    Resource(filename="x").save()
    expect(False, "a write to the view succeeded")
except ParseError as error:
    expect("119" in str(error), "view write: %s" % error)

print(json.dumps({"ok": True, "objects": 2, "viewRecords": len(resources)}))
