"""Schemathesis hooks of test/api/schemathesis.test.ts (loaded through SCHEMATHESIS_HOOKS).

A schedule's end_at must be after its start_at: a rule between two fields that JSON Schema cannot state, so the
document says it in end_at's description and this hook keeps generated bodies to it. Only two valid dates out of
order are changed (end_at moves to an hour after start_at); a body that is invalid in any other way stays so.

A status long poll (`?wait=`, up to 60 s) is held as long as asked: generated waits are kept to 2 s, so one request
cannot take the run's time (as test/reliability/api-fuzz.test.ts does).
"""
from datetime import datetime, timedelta

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
    body = case.body
    if isinstance(body, dict):
        _order(body)
        _order(body.get("spec"))
    return case
