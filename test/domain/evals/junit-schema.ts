/**
 * Test-side checks for the JUnit writer, with nothing but node: no XML parser or XSD validator is installed, and
 * the writer's test must not add one. So:
 *
 * - `parseXml` is a strict parser for the XML subset the writer emits (declaration, elements, attributes, text,
 *   character and the five entity references). It refuses what a conforming parser refuses in that subset — a
 *   character XML 1.0 cannot carry, a raw `<` or an unknown `&` reference, unquoted or duplicate attributes,
 *   mismatched tags, `]]>` in text, more than one root — and anything outside the subset (CDATA, comments,
 *   DOCTYPE, processing instructions). Attribute values are normalised as the XML spec says (literal tab, newline
 *   and carriage return become spaces), so round-trip tests see what a real parser sees.
 * - `junitSchemaViolations` checks a parsed document against the rules of the Apache Ant JUnit schema (the
 *   `JUnit.xsd` published by Windy Road, the strictest in common use): which elements, in which order and how many;
 *   which attributes are required or allowed, and their types (xs:int, xs:decimal, the timestamp pattern, non-empty
 *   tokens). Written from the schema's rules, not generated from it.
 */

export interface XmlElement {
  name: string;
  attributes: Map<string, string>;
  children: (XmlElement | string)[];
}

const XML_CHAR = /^[\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u;
const NAME = /^[A-Za-z_:][A-Za-z0-9_.:-]*/;
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** Resolves references in `raw` (which must contain no `<`); throws on an unknown or malformed one. */
function unescape(raw: string, where: string): string {
  if (raw.includes('<')) throw new Error(`raw "<" in ${where}`);
  return raw.replace(/&([^;]*);?/g, (whole, body: string) => {
    if (!whole.endsWith(';')) throw new Error(`unterminated reference in ${where}`);
    if (ENTITIES[body] !== undefined) return ENTITIES[body];
    const num = /^#(?:x([0-9A-Fa-f]+)|([0-9]+))$/.exec(body);
    if (!num) throw new Error(`unknown reference &${body}; in ${where}`);
    const code = num[1] !== undefined ? parseInt(num[1], 16) : parseInt(num[2]!, 10);
    const char = code <= 0x10ffff ? String.fromCodePoint(code) : '';
    if (!XML_CHAR.test(char) || char === '') throw new Error(`reference to a non-XML character in ${where}`);
    return char;
  });
}

/** Parses `xml` strictly (see the file comment); throws an Error saying what is wrong and where. */
export function parseXml(xml: string): XmlElement {
  if (!XML_CHAR.test(xml)) throw new Error('a character XML 1.0 cannot carry');
  let i = 0;
  const decl = /^<\?xml version="1\.0"(?: encoding="UTF-8")?\?>/.exec(xml);
  if (decl) i = decl[0].length;
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  while (i < xml.length) {
    const lt = xml.indexOf('<', i);
    const text = xml.slice(i, lt < 0 ? xml.length : lt);
    if (text.includes(']]>')) throw new Error(`"]]>" in text at ${i}`);
    if (text.length > 0) {
      const top = stack[stack.length - 1];
      if (top) top.children.push(unescape(text, `text at ${i}`));
      else if (text.trim() !== '') throw new Error(`text outside the root at ${i}`);
    }
    if (lt < 0) break;
    i = lt;
    if (xml.startsWith('</', i)) {
      const m = /^<\/([A-Za-z_:][A-Za-z0-9_.:-]*)\s*>/.exec(xml.slice(i));
      const open = stack.pop();
      if (!m || !open || open.name !== m[1]) throw new Error(`mismatched end tag at ${i}`);
      i += m[0].length;
      continue;
    }
    if (/^<[!?]/.test(xml.slice(i, i + 2))) throw new Error(`markup outside the supported subset at ${i}`);
    const name = NAME.exec(xml.slice(i + 1));
    if (!name) throw new Error(`bad element name at ${i}`);
    i += 1 + name[0].length;
    const element: XmlElement = { name: name[0], attributes: new Map(), children: [] };
    for (;;) {
      const ws = /^\s*/.exec(xml.slice(i))![0];
      i += ws.length;
      if (xml.startsWith('/>', i) || xml.startsWith('>', i)) break;
      if (ws === '') throw new Error(`attributes must be separated by whitespace at ${i}`);
      const attr = /^([A-Za-z_:][A-Za-z0-9_.:-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')/.exec(xml.slice(i));
      if (!attr) throw new Error(`bad attribute at ${i}`);
      if (element.attributes.has(attr[1]!)) throw new Error(`duplicate attribute ${attr[1]} at ${i}`);
      // Attribute-value normalisation: literal whitespace characters become spaces; references are kept.
      const raw = (attr[2] ?? attr[3]!).replace(/[\t\n\r]/g, ' ');
      element.attributes.set(attr[1]!, unescape(raw, `attribute ${attr[1]}`));
      i += attr[0].length;
    }
    const selfClosing = xml.startsWith('/>', i);
    i += selfClosing ? 2 : 1;
    const parent = stack[stack.length - 1];
    if (parent) parent.children.push(element);
    else if (root) throw new Error(`a second root element at ${i}`);
    else root = element;
    if (!selfClosing) stack.push(element);
  }
  if (stack.length > 0) throw new Error(`unclosed element <${stack[stack.length - 1]!.name}>`);
  if (!root) throw new Error('no root element');
  return root;
}

export function textOf(element: XmlElement): string {
  return element.children.filter((c): c is string => typeof c === 'string').join('');
}

export function childElements(element: XmlElement): XmlElement[] {
  return element.children.filter((c): c is XmlElement => typeof c !== 'string');
}

const INT = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;
const nonEmptyToken = (v: string) => v.replace(/\s+/g, ' ').trim().length > 0;

type AttributeRule = { required: boolean; check?: (v: string) => boolean; type?: string };

function checkAttributes(el: XmlElement, rules: Record<string, AttributeRule>, at: string, out: string[]): void {
  for (const [name, rule] of Object.entries(rules)) {
    const value = el.attributes.get(name);
    if (value === undefined) {
      if (rule.required) out.push(`${at}: missing required attribute ${name}`);
    } else if (rule.check && !rule.check(value)) {
      out.push(`${at}: attribute ${name}="${value}" is not ${rule.type}`);
    }
  }
  for (const name of el.attributes.keys()) {
    if (!(name in rules)) out.push(`${at}: attribute ${name} is not allowed`);
  }
}

function onlyWhitespace(el: XmlElement, at: string, out: string[]): void {
  if (textOf(el).trim() !== '') out.push(`${at}: text is not allowed here`);
}

const int: AttributeRule = {
  required: true,
  check: (v) => INT.test(v) && Math.abs(Number(v)) < 2 ** 31,
  type: 'an xs:int',
};
const decimal: AttributeRule = { required: true, check: (v) => DECIMAL.test(v), type: 'an xs:decimal' };
const token: AttributeRule = { required: true, check: nonEmptyToken, type: 'a non-empty token' };
const anyString: AttributeRule = { required: true };

function checkTestcase(tc: XmlElement, at: string, out: string[]): void {
  checkAttributes(tc, { name: anyString, classname: anyString, time: decimal }, at, out);
  onlyWhitespace(tc, at, out);
  const children = childElements(tc);
  // <xs:choice minOccurs="0">: at most one of skipped, error, failure.
  if (children.length > 1) out.push(`${at}: at most one of skipped, error, failure`);
  for (const child of children) {
    const where = `${at}/${child.name}`;
    if (child.name === 'error' || child.name === 'failure') {
      checkAttributes(child, { message: { required: false }, type: anyString }, where, out);
      if (childElements(child).length > 0) out.push(`${where}: only text is allowed`);
    } else if (child.name !== 'skipped') {
      out.push(`${where}: element not allowed in a testcase`);
    }
  }
}

function checkTestsuite(suite: XmlElement, at: string, aggregated: boolean, out: string[]): void {
  checkAttributes(
    suite,
    {
      name: token,
      timestamp: { required: true, check: (v) => TIMESTAMP.test(v), type: 'a timestamp without zone' },
      hostname: token,
      tests: int,
      failures: int,
      errors: int,
      skipped: { ...int, required: false },
      time: decimal,
      ...(aggregated ? { package: anyString, id: int } : {}),
    },
    at,
    out,
  );
  onlyWhitespace(suite, at, out);
  // <xs:sequence>: properties, testcase*, system-out, system-err — each of the three exactly once.
  const names = childElements(suite).map((c) => c.name);
  const order = /^properties(,testcase)*,system-out,system-err$/;
  if (!order.test(names.join(','))) out.push(`${at}: children must be properties, testcase*, system-out, system-err`);
  for (const [index, child] of childElements(suite).entries()) {
    const where = `${at}/${child.name}[${index}]`;
    if (child.name === 'properties') {
      onlyWhitespace(child, where, out);
      for (const p of childElements(child)) {
        if (p.name !== 'property') out.push(`${where}: only property elements are allowed`);
        checkAttributes(p, { name: token, value: anyString }, `${where}/property`, out);
        if (p.children.length > 0) out.push(`${where}/property: must be empty`);
      }
    } else if (child.name === 'testcase') {
      checkTestcase(child, where, out);
    } else if (child.name === 'system-out' || child.name === 'system-err') {
      if (childElements(child).length > 0) out.push(`${where}: only text is allowed`);
      checkAttributes(child, {}, where, out);
    }
  }
}

/** Every way `root` breaks the JUnit schema's rules (empty when it conforms). */
export function junitSchemaViolations(root: XmlElement): string[] {
  const out: string[] = [];
  if (root.name === 'testsuite') {
    checkTestsuite(root, '/testsuite', false, out);
  } else if (root.name === 'testsuites') {
    checkAttributes(root, {}, '/testsuites', out);
    onlyWhitespace(root, '/testsuites', out);
    childElements(root).forEach((suite, i) => {
      if (suite.name !== 'testsuite') out.push(`/testsuites: ${suite.name} is not allowed`);
      else checkTestsuite(suite, `/testsuites/testsuite[${i}]`, true, out);
    });
  } else {
    out.push(`the root must be testsuites or testsuite, not ${root.name}`);
  }
  return out;
}
