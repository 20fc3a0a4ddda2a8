import Foundation
import WidgetHostModel
import WidgetHostScheduler
import WidgetHostWeb

/// `simulate --html FILE`: one self-contained page (inline SVG and CSS, no
/// script, nothing fetched at view time) with, per instance, its reloads
/// over the run (counted, free, deferred with the time it waited), the
/// counted reloads in the rolling window against the allowance, and the
/// moments its displayed entry changed; a time axis under each plot, the
/// allowance as a stepped line (it changes when the budget does), and a
/// Content-Security-Policy that forbids every fetch and script.
enum SimulationHTML {
    /// Instances drawn at most (the page says how many were left out).
    static let instanceLimit = 200

    /// Keeps, as the run goes, the reloads and display changes of the
    /// instances the page draws (the first ``instanceLimit``), nothing of the others.
    final class Collector {
        fileprivate var reloadsOf: [String: [ScenarioSimulator.Reload]] = [:]
        fileprivate var changesOf: [String: [Double]] = [:]

        init(_ scenario: Scenario) {
            for instance in scenario.instances.prefix(SimulationHTML.instanceLimit) {
                reloadsOf[instance.id] = []
                changesOf[instance.id] = []
            }
        }

        /// One record of the run.
        func add(_ record: ScenarioSimulator.Record) {
            switch record {
            case .reload(let reload): reloadsOf[reload.decision.instanceID]?.append(reload)
            case .display(let change): changesOf[change.instance]?.append(change.time)
            case .event: break
            }
        }
    }

    static func page(_ result: ScenarioSimulator.Result, _ collected: Collector) -> String {
        let start = result.scenario.start
        let span = max(1, result.end - start)
        let width = 960.0
        func x(_ t: Double) -> String { format(max(0, min(width, (t - start) / span * width))) }
        let reloadsOf = collected.reloadsOf
        let changesOf = collected.changesOf
        var html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
            <title>widgethost simulate: \(escape(result.scenario.file))</title>
            <style>
            body { font: 14px system-ui, sans-serif; margin: 1.5em; color: #222; }
            h2 { font-size: 15px; margin: 1.2em 0 0.2em; }
            .legend span { margin-right: 1.2em; }
            svg { display: block; background: #fafafa; border: 1px solid #ddd; }
            svg text { font: 10px system-ui, sans-serif; fill: #555; }
            </style></head><body>
            <h1>\(escape(result.scenario.file))</h1>
            <p>\(escape(result.scenario.summary))</p>
            <p>\(escape(Timestamp.iso8601(start))) to \(escape(Timestamp.iso8601(result.end))),
            \(result.reloads) reloads, \(result.pluginCalls) plugin calls.</p>
            <p class="legend"><span style="color:#1f4e9c">| counted</span><span style="color:#2a9d3a">| free</span>
            <span style="color:#e07b00">— deferred (from when it came due)</span><span style="color:#c0392b">- - allowance</span>
            <span style="color:#555">— counted in the rolling window</span><span style="color:#8e44ad">▾ entry change</span></p>

            """
        let shown = result.summaries.indices.prefix(instanceLimit)
        for index in shown {
            let summary = result.summary(index)
            let id = summary.instance
            let reloads = reloadsOf[id] ?? []
            let allowance = max(1, reloads.compactMap(\.decision.allowance).max() ?? summary.allowanceAtEnd)
            let band = 40.0
            let budgetTop = 50.0
            let budgetHeight = 50.0
            func y(_ counted: Int) -> String {
                format(budgetTop + budgetHeight - Double(counted) / Double(allowance) * budgetHeight)
            }
            html += "<h2>\(escape(id))</h2>\n"
            html += "<svg width=\"\(Int(width))\" height=\"136\" viewBox=\"0 0 \(Int(width)) 136\" role=\"img\">\n"
            html += "<title>reloads of \(escape(id))</title>\n"
            // The allowance in force, stepped: the budget may change during the run.
            var allowancePoints: [String] = []
            var inForce = reloads.first?.decision.allowance ?? summary.allowanceAtEnd
            allowancePoints.append("0,\(y(inForce))")
            for reload in reloads {
                guard let next = reload.decision.allowance, next != inForce else { continue }
                allowancePoints.append("\(x(reload.decision.time)),\(y(inForce))")
                allowancePoints.append("\(x(reload.decision.time)),\(y(next))")
                inForce = next
            }
            allowancePoints.append("\(Int(width)),\(y(inForce))")
            html +=
                "<polyline class=\"allowance\" fill=\"none\" points=\"\(allowancePoints.joined(separator: " "))\" stroke=\"#c0392b\" stroke-dasharray=\"4 3\"/>\n"
            html += "<text x=\"4\" y=\"\(y(allowance))\" dy=\"-2\">allowance \(allowance)</text>\n"
            // The time axis: five ticks over the run.
            html += "<line x1=\"0\" x2=\"\(Int(width))\" y1=\"112\" y2=\"112\" stroke=\"#bbb\"/>\n"
            for tick in 0...4 {
                let time = start + span * Double(tick) / 4
                let anchor = tick == 0 ? "start" : tick == 4 ? "end" : "middle"
                html +=
                    "<line x1=\"\(x(time))\" x2=\"\(x(time))\" y1=\"112\" y2=\"116\" stroke=\"#bbb\"/>"
                    + "<text class=\"tick\" x=\"\(x(time))\" y=\"128\" text-anchor=\"\(anchor)\">\(escape(String(Timestamp.iso8601(time).prefix(16))))</text>\n"
            }
            var points: [String] = ["0,\(y(0))"]
            for reload in reloads {
                let d = reload.decision
                let color = d.charge.isCounted ? "#1f4e9c" : "#2a9d3a"
                let failed = reload.failure != nil ? " stroke-dasharray=\"2 2\"" : ""
                html +=
                    "<line class=\"reload \(d.charge.isCounted ? "counted" : "free")\" x1=\"\(x(d.time))\" x2=\"\(x(d.time))\" y1=\"4\" y2=\"\(format(band))\" stroke=\"\(color)\"\(failed)><title>\(escape(d.description))</title></line>\n"
                if let deferral = d.deferral {
                    html +=
                        "<line class=\"deferral\" x1=\"\(x(deferral.from))\" x2=\"\(x(d.time))\" y1=\"\(format(band - 4))\" y2=\"\(format(band - 4))\" stroke=\"#e07b00\" stroke-width=\"3\"/>\n"
                }
                if let counted = d.countedInWindow {
                    points.append("\(x(d.time)),\(y(counted))")
                }
            }
            html += "<polyline fill=\"none\" stroke=\"#555\" points=\"\(points.joined(separator: " "))\"/>\n"
            for time in changesOf[id] ?? [] {
                html += "<path class=\"entry\" d=\"M\(x(time)) 104 l-3 -5 h6 z\" fill=\"#8e44ad\"/>\n"
            }
            html += "</svg>\n"
        }
        if result.summaries.count > shown.count {
            html += "<p>\(result.summaries.count - shown.count) more instances not drawn.</p>\n"
        }
        return html + "</body></html>\n"
    }

    static func format(_ value: Double) -> String { String(format: "%.1f", value) }

    /// Text as HTML character data or an attribute value (the web side's one escaper).
    static func escape(_ text: String) -> String { HTMLText.escape(text) }
}
