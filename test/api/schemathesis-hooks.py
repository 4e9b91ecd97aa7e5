"""Schemathesis hooks of test/api/schemathesis.test.ts (loaded through SCHEMATHESIS_HOOKS).

A schedule's end_at must be after its start_at: a rule between two fields that JSON Schema cannot state, so the
document says it in end_at's description and this hook keeps generated bodies to it. Only two valid dates out of
order are changed (end_at moves to an hour after start_at); a body that is invalid in any other way stays so.

A usage range (`GET /api/v1/usage`) has rules between its values and today that JSON Schema cannot state either:
`from` not after `to`, at most 400 days, and a thread grouping only over the last week's kept calls. Two valid days
are put in order and the range shortened to 400 days; a thread grouping drops its days (the defaults fit). A
malformed day stays as it is.

A status long poll (`?wait=`, up to 60 s) is held as long as asked: generated waits are kept to 2 s, so one request
cannot take the run's time (as test/reliability/api-fuzz.test.ts does).
"""
from datetime import date, datetime, timedelta, timezone

import schemathesis


def _instant(value):
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def _order(obj):
    if not isinstance(obj, dict):
        return
    start, end = _instant(obj.get("start_at")), _instant(obj.get("end_at"))
    if start is None or end is None or end > start:
        return
    try:
        obj["end_at"] = (start + timedelta(hours=1)).isoformat()
    except OverflowError:
        obj["start_at"] = (end - timedelta(hours=1)).isoformat()


def _day(value):
    if not isinstance(value, str):
        return None
    try:
        return date.fromisoformat(value) if len(value) == 10 else None
    except ValueError:
        return None


def _usage_range(query):
    groups = query.get("group_by")
    groups = groups if isinstance(groups, list) else [groups]
    if any(isinstance(g, str) and "thread" in g.split(",") for g in groups):
        query.pop("from", None)
        query.pop("to", None)
        return
    today = datetime.now(timezone.utc).date()
    start, end = _day(query.get("from")), _day(query.get("to"))
    if start is not None and "to" not in query:
        end = today
    if start is None or end is None:
        return
    if start > end:
        start, end = end, start
    if (end - start).days > 399:
        start = end - timedelta(days=399)
    query["from"] = start.isoformat()
    if "to" in query or end != today:
        query["to"] = end.isoformat()


# map_case rather than map_body: the coverage phase applies case hooks only.
@schemathesis.hook
def map_case(context, case):
    query = case.query
    if isinstance(query, dict) and "wait" in query:
        try:
            if int(query["wait"]) > 2:
                query["wait"] = 2
        except (TypeError, ValueError):
            pass
    if isinstance(query, dict) and case.operation.path == "/api/v1/usage":
        _usage_range(query)
    body = case.body
    if isinstance(body, dict):
        _order(body)
        _order(body.get("spec"))
    return case
