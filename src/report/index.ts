// Public surface of the report domain: build the model from loaded store data, render it. Pure.
export { buildReportModel, summarizeModel, isSimulated, SIMULATED_TEXT, MAX_EVIDENCE_LINES } from './model.js';
export { renderMarkdown } from './markdown.js';
export { renderHtml } from './html.js';
export { renderChartSvg, renderChartText } from './charts.js';
export { renderTrialChartSvg, renderLevelChartSvg } from './trial-charts.js';
export type {
  ReportInput,
  ReportTrial,
  ReportModel,
  TrialRow,
  ChartModel,
  ChartPoint,
  TimelineEntry,
  FailureModel,
  LineChartModel,
  BarChartModel,
  KeepModel,
  RunningModel,
  LatencyRow,
} from './types.js';
