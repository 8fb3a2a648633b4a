// OpenTelemetry JS's OTLP/HTTP log exporter, which sends OTLP/JSON: COUNT records to URL/v1/logs, then exits.
// Usage: node otlp_json.js URL TOKEN DATASET COUNT
const { LoggerProvider, BatchLogRecordProcessor } = require('@opentelemetry/sdk-logs');
const { OTLPLogExporter } = require('@opentelemetry/exporter-logs-otlp-http');
const { resourceFromAttributes } = require('@opentelemetry/resources');

const [url, token, dataset, count] = process.argv.slice(2);
const exporter = new OTLPLogExporter({
  url: `${url}/v1/logs`,
  headers: { Authorization: `Bearer ${token}`, 'X-Beacon-Dataset': dataset },
});
const provider = new LoggerProvider({
  resource: resourceFromAttributes({ 'service.name': 'node-shop' }),
  processors: [
    new BatchLogRecordProcessor({
      exporter, maxExportBatchSize: 500, maxQueueSize: 2 * Number(count), scheduledDelayMillis: 100,
    }),
  ],
});
const logger = provider.getLogger('shop.orders', '2.0.1');
const base = Date.now() - 60_000;
for (let i = 0; i < Number(count); i++) {
  logger.emit({
    timestamp: base + i,
    severityNumber: 9,
    severityText: 'INFO',
    body: `order ${i} shipped`,
    attributes: { 'order.id': i, 'order.express': i % 2 === 0, 'order.tags': ['a', 'b'] },
  });
}
provider.shutdown().then(
  () => process.exit(0),
  (err) => { console.error(err); process.exit(1); },
);
