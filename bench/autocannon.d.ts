/** The part of autocannon's API the benchmark uses (the package ships no types). */
declare module 'autocannon' {
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    headers?: Record<string, string>;
  }
  interface Result {
    non2xx: number;
    errors: number;
    requests: { average: number };
  }
  function autocannon(opts: Options, cb: (err: Error | null, result: Result) => void): unknown;
  export = autocannon;
}
