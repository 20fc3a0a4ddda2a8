import WidgetHostKit

/// How the game's kinds look in the host's dashboard and in `widgethost
/// preview` (Mustache over the entries' fields; see docs/preview.md).
enum CharacterTemplates {
    /// The character's health as a bar (a CSS custom property carries the
    /// level, 0 to 1, into the width).
    static let health = """
        <style>
        .hero{height:100%;box-sizing:border-box;padding:14px;background:#0f5132;color:#fff}
        .hero h1{margin:0;font-size:16px}
        .bar{margin-top:18px;height:12px;border-radius:6px;background:rgba(255,255,255,.25);overflow:hidden}
        .bar i{display:block;height:100%;width:calc(var(--level) * 100%);background:#7cf29a}
        .note{font-size:11px;margin-top:8px;opacity:.8}
        </style>
        <div class="hero"><h1>{{character}}</h1>
        <div class="bar" style="--level:{{healthLevel}}"><i></i></div>
        <div class="note">{{#isSample}}sample data{{/isSample}}{{^isSample}}health recovering{{/isSample}}</div></div>
        """

    /// accessoryCircular: the level in a ring.
    static let healthCircular = """
        <style>.ring{box-sizing:border-box;width:76px;height:76px;border-radius:50%;
        background:conic-gradient(#1c1c1e calc(var(--level) * 360deg),#d1d1d6 0);display:flex;align-items:center;justify-content:center}
        .ring b{display:flex;align-items:center;justify-content:center;width:60px;height:60px;border-radius:50%;background:#fff;font-size:10px}</style>
        <div class="ring" style="--level:{{healthLevel}}"><b>{{character}}</b></div>
        """

    /// The leaderboard: heroes, best first.
    static let leaderboard = """
        <style>
        .lb{height:100%;box-sizing:border-box;padding:12px 14px;background:#3a0ca3;color:#fff}
        .lb h1{margin:0 0 6px;font-size:14px}.lb ol{margin:0;padding-left:20px}
        .lb li{display:flex;justify-content:space-between;font-size:13px;line-height:1.6}
        .lb small{display:block;margin-top:6px;opacity:.7;font-size:10px}
        </style>
        <div class="lb"><h1>Leaderboard</h1><ol>{{#heroes}}<li><span>{{name}}</span><b>{{score}}</b></li>{{/heroes}}</ol>
        <small>{{source}}</small></div>
        """
}
