// autocannon ships no types; the bench uses this much of it.
declare module 'autocannon' {
  interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    pipelining?: number;
    duration?: number;
    timeout?: number;
    // the client object is autocannon's internal class
    setupClient?: (client: any) => void;
  }
  interface Result {
    errors: number;
    timeouts: number;
    non2xx: number;
  }
  function autocannon(options: Options, callback: (err: Error | null, result: Result) => void): unknown;
  export default autocannon;
}
