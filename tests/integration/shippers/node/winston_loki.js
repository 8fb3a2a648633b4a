// winston-loki: COUNT lines to Beacon's Loki push API (URL/v1/loki/api/v1/push), protobuf + snappy or JSON.
// Usage: node winston_loki.js URL TOKEN DATASET COUNT protobuf|json
const winston = require('winston');
const LokiTransport = require('winston-loki');

const [url, token, dataset, count, encoding] = process.argv.slice(2);
const transport = new LokiTransport({
  host: `${url}/v1`,
  basicAuth: `loki:${token}`,
  json: encoding === 'json',
  labels: { app: 'shop', dataset },
  format: winston.format.printf(({ message }) => message),
  interval: 0.2,
  gracefulShutdown: false,
  onConnectionError: (err) => { console.error(err); process.exitCode = 1; },
});
// What it sends (winston-loki falls back to JSON when the snappy package does not load): the test checks it.
console.log(transport.batcher.contentType);
const logger = winston.createLogger({ transports: [transport] });
for (let i = 0; i < Number(count); i++) {
  (i % 4 === 0 ? logger.warn : logger.info).call(logger, `line ${i} "quoted" \\ é`);
}
transport.flush().then(() => { transport.close(); }, (err) => { console.error(err); process.exit(1); });
