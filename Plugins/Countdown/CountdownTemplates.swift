import WidgetHostKit

/// How the countdown looks in the host's dashboard and in `widgethost
/// preview` (Mustache over `CountdownEntry`'s fields; see docs/preview.md).
enum CountdownTemplates {
    static let style = """
        <style>
        .cd{height:100%;box-sizing:border-box;padding:14px;background:linear-gradient(160deg,#1d2b64,#f8cdda);color:#fff}
        .cd h1{margin:0;font-size:13px;font-weight:600;opacity:.85}
        .cd .big{font-size:44px;font-weight:700;line-height:1.05;margin-top:14px}
        .cd .unit{font-size:12px;opacity:.85}
        .cd .rest{font-size:12px;margin-top:4px}
        .done{font-size:26px;font-weight:700;margin-top:22px}
        </style>
        """

    /// systemSmall: the days large, hours and minutes below.
    static let small =
        style + """
            <div class="cd"><h1>{{title}}</h1>
            {{#remainingSeconds}}<div class="big">{{days}}<span class="unit"> days</span></div>
            <div class="rest">{{hours}} h {{minutes}} min</div>{{/remainingSeconds}}
            {{^remainingSeconds}}<div class="done">It's here</div>{{/remainingSeconds}}</div>
            """

    /// accessoryCircular: days in a ring.
    static let circular = """
        <style>.ring{box-sizing:border-box;width:76px;height:76px;border-radius:50%;border:5px solid #1c1c1e;
        display:flex;flex-direction:column;align-items:center;justify-content:center;font-weight:700}
        .ring b{font-size:24px;line-height:1}.ring span{font-size:9px}</style>
        <div class="ring"><b>{{days}}</b><span>days</span></div>
        """

    /// accessoryRectangular: title and the time left on two lines.
    static let rectangular = """
        <style>.r{padding:8px 10px;font-weight:600}.r .t{font-size:12px;opacity:.7}.r .v{font-size:18px}</style>
        <div class="r"><div class="t">{{title}}</div><div class="v">{{days}}d {{hours}}h {{minutes}}m</div></div>
        """

    /// accessoryInline: one line of text.
    static let inline = """
        <style>.i{padding:4px 6px;white-space:nowrap;font-weight:600}</style>
        <div class="i">{{days}}d {{hours}}h until {{title}}</div>
        """
}
