// Public surface of the report domain: build the model from loaded store data, render it. Pure.
export { buildReportModel, summarizeModel, MAX_EVIDENCE_LINES } from './model.js';
export { renderMarkdown } from './markdown.js';
export { renderHtml } from './html.js';
export { renderChartSvg, renderChartText } from './charts.js';
export type { ReportInput, ReportTrial, ReportModel, TrialRow, ChartModel, ChartPoint, TimelineEntry, FailureModel } from './types.js';
