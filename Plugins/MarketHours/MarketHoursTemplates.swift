import WidgetHostKit

/// How the market-hours kind looks in the host's dashboard and in
/// `widgethost preview` (Mustache over `MarketEntry`'s fields).
enum MarketHoursTemplates {
    /// systemSmall and systemMedium: the exchange, open or closed and why,
    /// and when that changes.
    static let system = """
        <style>
        .m{height:100%;box-sizing:border-box;padding:14px;background:#f2f2f7}
        .m h1{margin:0;font-size:15px}
        .st{display:inline-block;margin-top:12px;padding:3px 10px;border-radius:10px;font-weight:700;font-size:13px;background:#8e8e93;color:#fff}
        .st.open{background:#34c759}
        .m p{margin:8px 0 0;font-size:11px;color:#3a3a3c}
        </style>
        <div class="m"><h1>{{exchange}}</h1><span class="st {{status}}">{{status}}</span>
        {{#reason}}<p>{{reason}}</p>{{/reason}}<p>changes {{nextChange}}</p></div>
        """

    /// accessoryRectangular: two lines.
    static let rectangular = """
        <style>.r{padding:8px 10px}.r b{display:block;font-size:14px}.r span{font-size:11px}</style>
        <div class="r"><b>{{exchange}} {{status}}</b><span>{{#reason}}{{reason}}{{/reason}}{{^reason}}until {{nextChange}}{{/reason}}</span></div>
        """

    /// accessoryInline: one line.
    static let inline = """
        <style>.i{padding:4px 6px;white-space:nowrap}</style><div class="i">{{exchange}}: {{status}}</div>
        """
}
