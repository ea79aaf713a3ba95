<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="ko" sourcelanguage="en">
<context>
    <name>Actions</name>
    <message>
        <source>Step over</source>
        <translation>한 단계 실행</translation>
    </message>
    <message>
        <source>Run the next statement (inside a paused loop or call: the next one at this level)</source>
        <translation>다음 문장을 실행합니다 (멈춘 반복문이나 호출 안에서는 같은 수준의 다음 문장)</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>한 단계</translation>
    </message>
    <message>
        <source>Step over (the next statement at this level)</source>
        <translation>한 단계 실행 (같은 수준의 다음 문장)</translation>
    </message>
    <message>
        <source>Step into</source>
        <translation>안으로 들어가기</translation>
    </message>
    <message>
        <source>Stop at the next statement at any depth: loop and if bodies, script functions, a module&apos;s forward</source>
        <translation>깊이에 상관없이 다음 문장에서 멈춥니다: 반복문과 if 본문, 스크립트 함수, 모듈의 forward</translation>
    </message>
    <message>
        <source>Step into (loop, if, with and try bodies; script functions, forward)</source>
        <translation>안으로 들어가기 (반복문·if·with·try 본문, 스크립트 함수, forward)</translation>
    </message>
    <message>
        <source>Step out</source>
        <translation>밖으로 나가기</translation>
    </message>
    <message>
        <source>Finish the current loop or call and stop in the code around it</source>
        <translation>지금 반복문이나 호출을 끝까지 실행하고 바깥 코드에서 멈춥니다</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>실행</translation>
    </message>
    <message>
        <source>Run to the next breakpoint (to the end when there is none)</source>
        <translation>다음 중단점까지 실행합니다 (중단점이 없으면 끝까지)</translation>
    </message>
    <message>
        <source>Run / continue to the next breakpoint (to the end when there is none)</source>
        <translation>실행 / 다음 중단점까지 계속 (중단점이 없으면 끝까지)</translation>
    </message>
    <message>
        <source>Run to backward()</source>
        <translation>backward()까지 실행</translation>
    </message>
    <message>
        <source>Run until just before the next statement that calls backward()</source>
        <translation>backward()를 호출하는 다음 문장 바로 앞까지 실행합니다</translation>
    </message>
    <message>
        <source>Toggle breakpoint</source>
        <translation>중단점 설정/해제</translation>
    </message>
    <message>
        <source>Set or clear a breakpoint on the editor&apos;s cursor line</source>
        <translation>편집기 커서가 있는 줄에 중단점을 설정하거나 해제합니다</translation>
    </message>
    <message>
        <source>Toggle a breakpoint on the cursor line (or click the line number)</source>
        <translation>커서가 있는 줄에 중단점 설정/해제 (줄 번호를 클릭해도 됩니다)</translation>
    </message>
    <message>
        <source>Run to cursor</source>
        <translation>커서까지 실행</translation>
    </message>
    <message>
        <source>Run through the statement on the editor&apos;s cursor line</source>
        <translation>편집기 커서가 있는 줄의 문장까지 실행합니다</translation>
    </message>
    <message>
        <source>Step back</source>
        <translation>한 단계 뒤로</translation>
    </message>
    <message>
        <source>Undo the last statement (replays the ones before it)</source>
        <translation>마지막 문장을 되돌립니다 (그 앞의 문장을 다시 실행)</translation>
    </message>
    <message>
        <source>Step back (the previous step on the timeline)</source>
        <translation>한 단계 뒤로 (타임라인의 이전 단계)</translation>
    </message>
    <message>
        <source>Reset</source>
        <translation>처음으로</translation>
    </message>
    <message>
        <source>Back to before the first statement</source>
        <translation>첫 문장을 실행하기 전으로 돌아갑니다</translation>
    </message>
    <message>
        <source>Backward step</source>
        <translation>역전파 한 단계</translation>
    </message>
    <message>
        <source>Show the next engine step of the backward pass</source>
        <translation>역전파에서 엔진이 실행한 다음 단계를 보여 줍니다</translation>
    </message>
    <message>
        <source>Backward to end</source>
        <translation>역전파 끝까지</translation>
    </message>
    <message>
        <source>Show the backward pass to its last step</source>
        <translation>역전파를 마지막 단계까지 보여 줍니다</translation>
    </message>
    <message>
        <source>Zero grad</source>
        <translation>기울기 0으로</translation>
    </message>
    <message>
        <source>Set every leaf&apos;s .grad to zero</source>
        <translation>모든 리프 텐서의 .grad를 0으로 만듭니다</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>중지</translation>
    </message>
    <message>
        <source>Stop the statement that is running or paused (its work so far is kept)</source>
        <translation>실행 중이거나 멈춘 문장을 중지합니다 (지금까지 한 작업은 남습니다)</translation>
    </message>
    <message>
        <source>Stop (the statement ends where it stands and keeps its work; one stuck in native code is killed)</source>
        <translation>중지 (문장은 그 자리에서 끝나고 한 작업은 남습니다. 네이티브 코드에서 멈춘 문장은 강제로 종료됩니다)</translation>
    </message>
    <message>
        <source>&amp;New</source>
        <translation>새로 만들기(&amp;N)</translation>
    </message>
    <message>
        <source>Start an empty script</source>
        <translation>빈 스크립트를 시작합니다</translation>
    </message>
    <message>
        <source>&amp;Open…</source>
        <translation>열기(&amp;O)…</translation>
    </message>
    <message>
        <source>Open a script or a gradviz snapshot</source>
        <translation>스크립트나 gradviz 스냅숏을 엽니다</translation>
    </message>
    <message>
        <source>&amp;Save</source>
        <translation>저장(&amp;S)</translation>
    </message>
    <message>
        <source>Save the script</source>
        <translation>스크립트를 저장합니다</translation>
    </message>
    <message>
        <source>Save &amp;As…</source>
        <translation>다른 이름으로 저장(&amp;A)…</translation>
    </message>
    <message>
        <source>Save the script as a new file</source>
        <translation>스크립트를 새 파일로 저장합니다</translation>
    </message>
    <message>
        <source>Export graph image…</source>
        <translation>그래프 이미지 내보내기…</translation>
    </message>
    <message>
        <source>Write the graph as PNG or SVG</source>
        <translation>그래프를 PNG나 SVG로 저장합니다</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>끝내기(&amp;Q)</translation>
    </message>
    <message>
        <source>Quit gradviz</source>
        <translation>gradviz를 끝냅니다</translation>
    </message>
    <message>
        <source>Zoom in</source>
        <translation>확대</translation>
    </message>
    <message>
        <source>Zoom the graph in</source>
        <translation>그래프를 확대합니다</translation>
    </message>
    <message>
        <source>Zoom out</source>
        <translation>축소</translation>
    </message>
    <message>
        <source>Zoom the graph out</source>
        <translation>그래프를 축소합니다</translation>
    </message>
    <message>
        <source>Fit graph</source>
        <translation>그래프 맞추기</translation>
    </message>
    <message>
        <source>Show the graph at a readable zoom (all of it when it fits)</source>
        <translation>읽을 수 있는 배율로 그래프를 보여 줍니다 (들어가면 전체를)</translation>
    </message>
    <message>
        <source>Show whole graph</source>
        <translation>그래프 전체 보기</translation>
    </message>
    <message>
        <source>Zoom out until the whole graph is in view, however small</source>
        <translation>아무리 작아져도 그래프 전체가 보일 때까지 축소합니다</translation>
    </message>
    <message>
        <source>Find node…</source>
        <translation>노드 찾기…</translation>
    </message>
    <message>
        <source>Find a node by name, op, shape or module</source>
        <translation>이름, 연산, shape, 모듈로 노드를 찾습니다</translation>
    </message>
    <message>
        <source>Collapse linear chains</source>
        <translation>일렬 연산 접기</translation>
    </message>
    <message>
        <source>Draw each run of three or more one-to-one ops as one box</source>
        <translation>일대일로 이어진 연산이 셋 이상이면 상자 하나로 그립니다</translation>
    </message>
    <message>
        <source>Collapse all modules</source>
        <translation>모든 모듈 접기</translation>
    </message>
    <message>
        <source>Draw every top-level module as one box</source>
        <translation>최상위 모듈마다 상자 하나로 그립니다</translation>
    </message>
    <message>
        <source>Expand all</source>
        <translation>모두 펼치기</translation>
    </message>
    <message>
        <source>Show every node again</source>
        <translation>모든 노드를 다시 보여 줍니다</translation>
    </message>
    <message>
        <source>Show legend</source>
        <translation>범례 보기</translation>
    </message>
    <message>
        <source>What the node colours and shapes mean</source>
        <translation>노드의 색과 모양이 뜻하는 것</translation>
    </message>
    <message>
        <source>Reset panel layout</source>
        <translation>패널 배치 초기화</translation>
    </message>
    <message>
        <source>Put every panel back where it started</source>
        <translation>모든 패널을 처음 자리로 되돌립니다</translation>
    </message>
    <message>
        <source>Keyboard shortcuts</source>
        <translation>단축키</translation>
    </message>
    <message>
        <source>List every shortcut</source>
        <translation>모든 단축키를 보여 줍니다</translation>
    </message>
    <message>
        <source>About gradviz</source>
        <translation>gradviz 정보</translation>
    </message>
    <message>
        <source>What gradviz is</source>
        <translation>gradviz 소개</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <extracomment>menu title -&gt; action keys; &quot;-&quot; is a separator, &quot;@name&quot; a submenu the window fills</extracomment>
        <translation>파일(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Run</source>
        <translation>실행(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Demos</source>
        <translation>데모(&amp;D)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>보기(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>도움말(&amp;H)</translation>
    </message>
    <message>
        <source>Next / previous search hit (in the search box)</source>
        <extracomment>the toolbar, left to right: &quot;!key&quot; is an icon-only button, &quot;@device&quot; and &quot;@search&quot; widgets shortcuts that are not actions (the search box&apos;s own keys)</extracomment>
        <translation>다음 / 이전 검색 결과 (검색 상자에서)</translation>
    </message>
    <message>
        <source>Open &amp;recent</source>
        <translation>최근 파일 열기(&amp;R)</translation>
    </message>
    <message>
        <source>Device</source>
        <extracomment>actions drawn as icon-only buttons -&gt; their button</extracomment>
        <translation>장치</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>언어(&amp;L)</translation>
    </message>
    <message>
        <source>System language</source>
        <translation>시스템 언어</translation>
    </message>
    <message>
        <source>(no demos found)</source>
        <translation>(데모를 찾지 못했습니다)</translation>
    </message>
    <message>
        <source>Debug</source>
        <translation>디버그</translation>
    </message>
    <message>
        <source>Debug toolbar</source>
        <translation>디버그 도구 모음</translation>
    </message>
    <message>
        <source>Where tensors made with device=dev live (dev is this choice)</source>
        <translation>device=dev로 만든 텐서가 놓이는 곳 (dev가 여기서 고른 장치입니다)</translation>
    </message>
    <message>
        <source>Mode</source>
        <translation>모드</translation>
    </message>
    <message>
        <source>Find node</source>
        <translation>노드 찾기</translation>
    </message>
    <message>
        <source>Find node  (Ctrl+F)</source>
        <translation>노드 찾기  (Ctrl+F)</translation>
    </message>
    <message>
        <source>Search the graph by name, op, shape or module; Enter jumps to the next hit, Shift+Enter to the previous</source>
        <translation>이름, 연산, shape, 모듈로 그래프를 검색합니다. Enter는 다음 결과로, Shift+Enter는 이전 결과로 이동합니다</translation>
    </message>
    <message>
        <source>Search hits</source>
        <translation>검색 결과</translation>
    </message>
</context>
<context>
    <name>BackwardReplay</name>
    <message>
        <source>Backward pass #{n} recorded no engine step</source>
        <translation>역전파 #{n}에는 기록된 엔진 단계가 없습니다</translation>
    </message>
    <message>
        <source>The backward replay is over: every recorded step was shown</source>
        <translation>역전파 재생이 끝났습니다: 기록된 단계를 모두 보여 주었습니다</translation>
    </message>
</context>
<context>
    <name>Canvas</name>
    <message>
        <source>Step forward (F10) to build the graph</source>
        <translation>한 단계씩 실행하면(F10) 그래프가 만들어집니다</translation>
    </message>
    <message>
        <source>double-click to expand</source>
        <translation>더블클릭하면 펼칩니다</translation>
    </message>
    <message>
        <source>created by statement {n} (double-click to show)</source>
        <translation>{n}번 문장이 만듦 (더블클릭하면 보여 줍니다)</translation>
    </message>
    <message>
        <source>gradient passed along this edge: {grad}</source>
        <extracomment>(style, path, arrowheads) in drawing order; None: to be made before painting (top, bottom) of the boxes its edges join; None: to be found again</extracomment>
        <translation>이 간선으로 전달된 기울기: {grad}</translation>
    </message>
    <message>
        <source>cannot export to {what}: use .png or .svg</source>
        <translation>{what}(으)로는 내보낼 수 없습니다: .png나 .svg를 쓰세요</translation>
    </message>
    <message>
        <source>a file without suffix</source>
        <translation>확장자 없는 파일</translation>
    </message>
</context>
<context>
    <name>Cli</name>
    <message>
        <source>Step through PyTorch autograd. With no command, opens the window.</source>
        <extracomment>characters one text field of a statement keeps (its value, an error message, a warning, its source: at most the 1 MB a script may have); print output has its own budget (runner.MAX_OUTPUT_CHARS) characters of statements&apos; text other than print output kept, all fields together entries (list items, dict keys) kept in the nested values of all statements together statement results streamed by the kernel kept for a run it could not finish fields of one statement&apos;s result kept (a statement has ten)</extracomment>
        <translation>PyTorch autograd를 한 단계씩 따라갑니다. 명령 없이 실행하면 창을 엽니다.</translation>
    </message>
    <message>
        <source>run a script headless and report what autograd did</source>
        <translation>창 없이 스크립트를 실행하고 autograd가 한 일을 보고합니다</translation>
    </message>
    <message>
        <source>a tensor script (.py)</source>
        <translation>텐서 스크립트 (.py)</translation>
    </message>
    <message>
        <source>run a built-in demo by name (see `gradviz demos`)</source>
        <translation>내장 데모를 이름으로 실행합니다 (`gradviz demos` 참고)</translation>
    </message>
    <message>
        <source>go on after a failing statement</source>
        <translation>실패한 문장이 있어도 계속 실행합니다</translation>
    </message>
    <message>
        <source>print one JSON object</source>
        <translation>JSON 객체 하나로 출력합니다</translation>
    </message>
    <message>
        <source>with --json: add &apos;steps&apos;, every statement run at any depth (loops, functions), and place each backward pass (line, iteration, the nodes it ran over)</source>
        <translation>--json과 함께: &apos;steps&apos;(반복문, 함수 안까지 모든 깊이에서 실행된 문장 전부)를 더하고, 역전파마다 위치(줄, 반복 차수, 거쳐 간 노드)를 적습니다</translation>
    </message>
    <message>
        <source>seconds one statement may run (default 25); past it the kernel is stopped</source>
        <translation>문장 하나에 허용하는 실행 시간(초, 기본값 25). 넘기면 커널을 중지합니다</translation>
    </message>
    <message>
        <source>seconds the whole run may take (default 600, or 4 statement limits when more); past it the kernel is stopped</source>
        <translation>전체 실행에 허용하는 시간(초, 기본값 600, 문장 제한 시간의 4배가 더 길면 그 값). 넘기면 커널을 중지합니다</translation>
    </message>
    <message>
        <source>write the graph of a script (run first) or of a snapshot file to a file</source>
        <translation>스크립트(먼저 실행합니다)나 스냅숏 파일의 계산 그래프를 파일로 씁니다</translation>
    </message>
    <message>
        <source>a tensor script (.py) or a .gradviz.json snapshot</source>
        <translation>텐서 스크립트 (.py) 또는 .gradviz.json 스냅숏</translation>
    </message>
    <message>
        <source>.svg .png .dot .graphml .json (the graph&apos;s data) .html, or .gradviz.json (a snapshot: gradviz open shows it)</source>
        <translation>.svg .png .dot .graphml .json (그래프 데이터) .html, 또는 .gradviz.json (스냅숏: gradviz open으로 볼 수 있음)</translation>
    </message>
    <message>
        <source>list the built-in demos, one a line</source>
        <translation>내장 데모를 한 줄에 하나씩 보여 줍니다</translation>
    </message>
    <message>
        <source>also say what each teaches</source>
        <translation>데모마다 무엇을 배우는지도 보여 줍니다</translation>
    </message>
    <message>
        <source>open the window (the default)</source>
        <translation>창을 엽니다 (기본값)</translation>
    </message>
    <message>
        <source>open a script or a saved .gradviz.json snapshot</source>
        <translation>스크립트나 저장된 .gradviz.json 스냅숏을 엽니다</translation>
    </message>
    <message>
        <source>close the window after S seconds (a smoke test of an install)</source>
        <translation>S초 뒤에 창을 닫습니다 (설치가 제대로 되었는지 확인하는 스모크 테스트)</translation>
    </message>
    <message>
        <source>restricted mode refused this; if you trust the script&apos;s author, run it as Python: gradviz run --trust FILE</source>
        <extracomment>errors that are restricted mode&apos;s refusals, not the script&apos;s own failures (English in --json&apos;s &quot;trust_hint&quot;; the text output translates it, context ``Cli``)</extracomment>
        <translation>제한 모드가 이 작업을 거부했습니다. 스크립트 작성자를 신뢰한다면 Python으로 실행하세요: gradviz run --trust FILE</translation>
    </message>
    <message>
        <source>run the script in restricted mode: gradviz&apos;s interpreter in a confined process, for scripts from someone else (no files, network or programs)</source>
        <translation>스크립트를 제한 모드로 실행합니다: gradviz의 인터프리터가 격리된 프로세스에서 실행하며, 다른 사람이 만든 스크립트에 씁니다 (파일, 네트워크, 다른 프로그램 사용 불가)</translation>
    </message>
    <message>
        <source>run the script as real Python (the default): for your own code, as python runs it</source>
        <translation>스크립트를 실제 Python으로 실행합니다 (기본값): 직접 쓴 코드에 쓰며, python이 실행하는 것과 같습니다</translation>
    </message>
    <message>
        <source>{file} is not a Jupyter notebook ({error})</source>
        <translation>{file} 파일은 Jupyter 노트북이 아닙니다 ({error})</translation>
    </message>
    <message>
        <source>error: {message}</source>
        <translation>오류: {message}</translation>
    </message>
    <message>
        <source>allocated {size}</source>
        <translation>메모리 {size} 할당</translation>
    </message>
    <message>
        <source>why: {why}</source>
        <translation>이유: {why}</translation>
    </message>
    <message>
        <source>grad after each backward pass:</source>
        <translation>역전파마다 기록한 grad:</translation>
    </message>
    <message>
        <source>{file} is a gradviz snapshot ({nodes} nodes, {passes} backward pass), not a script: there is nothing to run. Open it with `gradviz open {file}`, or draw it with `gradviz export {file} -o graph.svg`</source>
        <translation>{file} 파일은 스크립트가 아니라 gradviz 스냅숏(노드 {nodes}개, 역전파 {passes}회)이라서 실행할 것이 없습니다. `gradviz open {file}`로 열거나, `gradviz export {file} -o graph.svg`로 그림을 그리세요</translation>
    </message>
    <message>
        <source>{file} is a gradviz snapshot ({nodes} nodes, {passes} backward passes), not a script: there is nothing to run. Open it with `gradviz open {file}`, or draw it with `gradviz export {file} -o graph.svg`</source>
        <translation>{file} 파일은 스크립트가 아니라 gradviz 스냅숏(노드 {nodes}개, 역전파 {passes}회)이라서 실행할 것이 없습니다. `gradviz open {file}`로 열거나, `gradviz export {file} -o graph.svg`로 그림을 그리세요</translation>
    </message>
    <message>
        <source>running {script} …</source>
        <translation>{script} 실행 중 …</translation>
    </message>
    <message>
        <source>wrote {path} ({nodes} nodes, {edges} edges)</source>
        <translation>{path}에 썼습니다 (노드 {nodes}개, 간선 {edges}개)</translation>
    </message>
    <message>
        <source>{reason}. Run gradviz on a desktop, or under a virtual screen (xvfb-run -a gradviz); the headless commands (gradviz run, export, demos) need none</source>
        <translation>{reason}. gradviz는 데스크톱에서 실행하거나 가상 화면(xvfb-run -a gradviz)에서 실행하세요. 창 없는 명령(gradviz run, export, demos)은 화면이 없어도 됩니다</translation>
    </message>
    <message>
        <source>no such file: {file}</source>
        <translation>파일이 없습니다: {file}</translation>
    </message>
    <message>
        <source>the window needs PySide6 ({error})</source>
        <translation>창을 열려면 PySide6가 필요합니다 ({error})</translation>
    </message>
    <message>
        <source>explanations and pages in this language (else GRADVIZ_LANG)</source>
        <translation>설명과 페이지를 이 언어로 표시합니다 (지정하지 않으면 GRADVIZ_LANG)</translation>
    </message>
    <message>
        <source>building the interactive page of {nodes} nodes and {edges} edges ({format})</source>
        <translation>노드 {nodes}개와 간선 {edges}개로 대화형 페이지를 만드는 중 ({format})</translation>
    </message>
    <message>
        <source>drawing {nodes} nodes and {edges} edges ({format})</source>
        <translation>노드 {nodes}개와 간선 {edges}개를 그리는 중 ({format})</translation>
    </message>
    <message>
        <source>laying out and drawing {nodes} nodes and {edges} edges ({format})</source>
        <translation>노드 {nodes}개와 간선 {edges}개를 배치하고 그리는 중 ({format})</translation>
    </message>
    <message>
        <source>building the interactive page of {nodes} nodes, {edges} edges and {passes} backward pass</source>
        <translation>노드 {nodes}개, 간선 {edges}개, 역전파 {passes}번으로 대화형 페이지를 만드는 중</translation>
    </message>
    <message>
        <source>building the interactive page of {nodes} nodes, {edges} edges and {passes} backward passes</source>
        <translation>노드 {nodes}개, 간선 {edges}개, 역전파 {passes}번으로 대화형 페이지를 만드는 중</translation>
    </message>
</context>
<context>
    <name>DebugStrip</name>
    <message>
        <source>Debugger: where the paused statement stands</source>
        <translation>디버거: 멈춘 문장의 위치</translation>
    </message>
    <message>
        <source>Paused at line</source>
        <translation>멈춘 줄</translation>
    </message>
    <message>
        <source>Loop iteration</source>
        <translation>반복 횟수</translation>
    </message>
    <message>
        <source>Call stack</source>
        <translation>호출 스택</translation>
    </message>
    <message>
        <source>Call stack, innermost frame first: function ← the line that called it</source>
        <translation>호출 스택, 가장 안쪽 프레임부터: 함수 ← 그 함수를 호출한 줄</translation>
    </message>
    <message>
        <source>Paused before line {line}</source>
        <translation>{line}번 줄 앞에서 멈춤</translation>
    </message>
    <message>
        <source>call stack: {stack}</source>
        <translation>호출 스택: {stack}</translation>
    </message>
    <message>
        <source>&lt;b style=&apos;color:#e67700&apos;&gt;Paused&lt;/b&gt;&amp;nbsp; at line {line}</source>
        <translation>&lt;b style=&apos;color:#e67700&apos;&gt;멈춤&lt;/b&gt;&amp;nbsp; {line}번 줄</translation>
    </message>
    <message>
        <source>iteration {n}</source>
        <translation>{n}번째 반복</translation>
    </message>
    <message>
        <source>iteration {n} of {total}</source>
        <translation>{total}번 중 {n}번째 반복</translation>
    </message>
    <message>
        <source>{function} ← line {line}</source>
        <translation>{function} ← {line}번 줄</translation>
    </message>
</context>
<context>
    <name>Dialogs</name>
    <message>
        <source>Unsaved changes</source>
        <translation>저장하지 않은 변경 사항</translation>
    </message>
    <message>
        <source>{name} has changes that are not saved.</source>
        <translation>{name}에 저장하지 않은 변경 사항이 있습니다.</translation>
    </message>
    <message>
        <source>Save them before going on?</source>
        <translation>계속하기 전에 저장할까요?</translation>
    </message>
    <message>
        <source>Restore unsaved work?</source>
        <translation>저장하지 않은 작업을 복원할까요?</translation>
    </message>
    <message>
        <source>gradviz stopped before {name} could be saved.
An autosaved copy from {when} exists. Restore it?</source>
        <translation>{name}을(를) 저장하기 전에 gradviz가 종료되었습니다.
{when}에 자동 저장된 사본이 있습니다. 복원할까요?</translation>
    </message>
    <message>
        <source>Keyboard shortcuts</source>
        <translation>단축키</translation>
    </message>
    <message>
        <source>Action</source>
        <translation>동작</translation>
    </message>
    <message>
        <source>Keys</source>
        <translation>키</translation>
    </message>
    <message>
        <source>About gradviz</source>
        <translation>gradviz 정보</translation>
    </message>
    <message>
        <source>&lt;b&gt;gradviz&lt;/b&gt; — step through PyTorch autograd.&lt;br&gt;&lt;br&gt;Type tensor code, step forward statement by statement, then step the backward pass node by node and watch gradients flow and accumulate in the real autograd graph. Scripts run in a separate, sandboxed kernel process.</source>
        <translation>&lt;b&gt;gradviz&lt;/b&gt; — PyTorch autograd를 한 단계씩 따라가 봅니다.&lt;br&gt;&lt;br&gt;텐서 코드를 입력하고 문장 단위로 실행한 다음, 역전파를 노드 단위로 따라가며 실제 autograd 계산 그래프에서 기울기가 흐르고 누적되는 모습을 봅니다. 스크립트는 샌드박스가 적용된 별도의 커널 프로세스에서 실행됩니다.</translation>
    </message>
    <message>
        <source>gradviz will speak {language} the next time it starts.</source>
        <translation>gradviz를 다음에 시작할 때부터 {language}(으)로 표시합니다.</translation>
    </message>
    <message>
        <source>GRADVIZ_LANG is set, so {language} is used while it stays set.</source>
        <translation>GRADVIZ_LANG이 설정되어 있으므로, 설정이 남아 있는 동안에는 {language}(으)로 표시합니다.</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>언어</translation>
    </message>
</context>
<context>
    <name>Editor</name>
    <message>
        <source># Type PyTorch code here, e.g.</source>
        <extracomment>the line a paused statement stops at (inside a loop body or a function) the top-level statement that is paused in the middle the light syntax colours; on a dark base each is lightened (see _syntax_colour) the user clicked a line in the gutter (which toggles its breakpoint) the set of breakpoint lines changed (sorted line numbers)</extracomment>
        <translation># 여기에 PyTorch 코드를 입력하세요. 예:</translation>
    </message>
    <message>
        <source>What to look at: </source>
        <extracomment>the breakpoint lines, from cursors anchored at their blocks&apos; starts: a cursor moves with the text around it, so a breakpoint stays on its line of code when lines are added or removed above it</extracomment>
        <translation>눈여겨볼 점: </translation>
    </message>
    <message>
        <source>Paused here: this line runs next (Step over F10, Step into F11)</source>
        <translation>여기서 멈춤: 이 줄이 다음에 실행됩니다 (한 단계 실행 F10, 안으로 들어가기 F11)</translation>
    </message>
    <message>
        <source>Runs next (Step, F10)</source>
        <translation>다음에 실행됨 (한 단계, F10)</translation>
    </message>
    <message>
        <source>Breakpoint: Run (F5) stops here (click to remove)</source>
        <translation>중단점: 실행(F5)하면 여기서 멈춥니다 (클릭하면 지워집니다)</translation>
    </message>
</context>
<context>
    <name>Explain</name>
    <message>
        <source>An earlier backward() without retain_graph=True freed the values this graph saved for computing gradients; pass retain_graph=True to every backward() but the last one to walk it again.</source>
        <translation>기울기 계산에 쓰려고 이 계산 그래프가 저장해 둔 값을, 앞서 retain_graph=True 없이 호출한 backward()가 해제했습니다. 그래프를 다시 거슬러 가려면 마지막 backward()를 뺀 모든 backward()에 retain_graph=True를 넘기세요.</translation>
    </message>
    <message>
        <source>Writing into a view of a leaf that requires grad would corrupt the leaf&apos;s gradient; do it inside torch.no_grad().</source>
        <translation>requires_grad=True인 리프 텐서의 뷰(view)에 값을 쓰면 그 리프 텐서의 기울기가 망가집니다. 이런 쓰기는 torch.no_grad() 안에서 하세요.</translation>
    </message>
    <message>
        <source>Changing a leaf that requires grad in place would corrupt the gradient PyTorch must compute for it; change it inside torch.no_grad() or change a clone instead.</source>
        <translation>requires_grad=True인 리프 텐서를 제자리 연산으로 바꾸면 PyTorch가 그 텐서에 대해 계산해야 할 기울기가 망가집니다. torch.no_grad() 안에서 바꾸거나, clone()으로 만든 복사본을 바꾸세요.</translation>
    </message>
    <message>
        <source>An in-place operation changed a tensor after an operation saved it for backward (its version counter moved on), so the saved value is stale; use the out-of-place version (b = b * 2 instead of b.mul_(2)).</source>
        <translation>어떤 연산이 역전파에 쓰려고 저장해 둔 텐서를 그 뒤에 제자리 연산이 바꿔 버려서(텐서의 버전 카운터가 올라갔습니다) 저장된 값이 더는 맞지 않습니다. 새 텐서를 만드는 연산을 쓰세요 (b.mul_(2) 대신 b = b * 2).</translation>
    </message>
    <message>
        <source>An operation mixed tensors on two devices; move them to one device with .to(dev) first.</source>
        <translation>한 연산에 서로 다른 두 장치의 텐서가 섞여 있습니다. 먼저 .to(dev)로 텐서들을 한 장치로 옮기세요.</translation>
    </message>
    <message>
        <source>NumPy cannot track gradients, so PyTorch refuses to hand over a tensor that is part of a graph; call .detach() first (and .to(&apos;cpu&apos;) for a cuda tensor).</source>
        <translation>NumPy는 기울기를 추적하지 못하기 때문에, PyTorch는 계산 그래프에 속한 텐서를 NumPy로 넘겨주지 않습니다. 먼저 .detach()를 호출하세요 (cuda 텐서라면 .to(&apos;cpu&apos;)도).</translation>
    </message>
    <message>
        <source>NumPy arrays live in CPU memory; copy the tensor to the cpu with .to(&apos;cpu&apos;) first.</source>
        <translation>NumPy 배열은 CPU 메모리에만 있을 수 있습니다. 먼저 .to(&apos;cpu&apos;)로 텐서를 cpu에 복사하세요.</translation>
    </message>
    <message>
        <source>This tensor was not built from anything that requires grad (or was built under no_grad), so there is no graph to run backward through.</source>
        <translation>이 텐서는 requires_grad=True인 텐서에서 만들어지지 않았거나 no_grad 안에서 만들어져서, 역전파로 거슬러 갈 계산 그래프가 없습니다.</translation>
    </message>
    <message>
        <source>backward() with no argument needs a single number; reduce the tensor first (for example .sum() or .mean()) or pass a gradient of the same shape.</source>
        <translation>인자 없는 backward()는 값이 하나뿐인 텐서(스칼라)에서만 호출할 수 있습니다. 먼저 .sum()이나 .mean() 등으로 텐서를 하나의 값으로 줄이거나, 같은 shape의 기울기를 인자로 넘기세요.</translation>
    </message>
    <message>
        <source>The shapes of the operands do not fit this operation; check them with .shape.</source>
        <translation>피연산자들의 shape이 이 연산에 맞지 않습니다. .shape으로 확인해 보세요.</translation>
    </message>
    <message>
        <source>Tensors made under inference_mode can never join an autograd graph; make them outside inference_mode, or clone them first.</source>
        <translation>inference_mode 안에서 만든 텐서는 autograd 계산 그래프에 들어갈 수 없습니다. inference_mode 밖에서 만들거나, 먼저 clone()으로 복사하세요.</translation>
    </message>
    <message>
        <source>autograd.grad was asked for the gradient of a tensor the output does not depend on.</source>
        <translation>autograd.grad에 출력과 연결되지 않은(출력이 의존하지 않는) 텐서의 기울기를 요청했습니다.</translation>
    </message>
    <message>
        <source>Gradients need real-valued (floating point) numbers; create the tensor with a float dtype, for example torch.tensor([1., 2.]).</source>
        <translation>기울기는 실수(부동소수점) 값에서만 구할 수 있습니다. torch.tensor([1., 2.])처럼 float dtype으로 텐서를 만드세요.</translation>
    </message>
    <message>
        <source>This machine has no CUDA device, so tensors can only live on the cpu here.</source>
        <translation>이 컴퓨터에는 CUDA 장치가 없어서, 여기서는 텐서를 cpu에만 둘 수 있습니다.</translation>
    </message>
    <message>
        <source>The kernel hit its memory limit (60% of this machine&apos;s memory by default), so gradviz refused the allocation; use smaller tensors or fewer of them.</source>
        <translation>커널이 메모리 한도(기본값은 이 컴퓨터 메모리의 60%)에 닿아서 gradviz가 메모리 할당을 거부했습니다. 더 작은 텐서를 쓰거나 텐서 수를 줄이세요.</translation>
    </message>
</context>
<context>
    <name>Files</name>
    <message>
        <source>Cannot show the snapshot</source>
        <translation>스냅숏을 보여 줄 수 없습니다</translation>
    </message>
    <message>
        <source>No demo named &apos;{demo}&apos;; the demos are: {known}</source>
        <translation>&apos;{demo}&apos;(이)라는 데모는 없습니다. 데모 목록: {known}</translation>
    </message>
    <message>
        <source>New script</source>
        <translation>새 스크립트</translation>
    </message>
    <message>
        <source>Demo &apos;{title}&apos;: ran its first {n} statements, up to its first backward(); Step (F10) runs that one</source>
        <translation>데모 &apos;{title}&apos;: 첫 backward() 앞까지 처음 {n}개 문장을 실행했습니다. 한 단계(F10)를 누르면 그 문장을 실행합니다</translation>
    </message>
    <message>
        <source>Demo &apos;{title}&apos; loaded: press Step (F10) to run it statement by statement</source>
        <translation>데모 &apos;{title}&apos;을(를) 불러왔습니다: 한 단계(F10)를 눌러 문장 단위로 실행하세요</translation>
    </message>
    <message>
        <source>Open script or snapshot</source>
        <translation>스크립트나 스냅숏 열기</translation>
    </message>
    <message>
        <source>Scripts and snapshots (*.py *.json);;Python scripts (*.py);;gradviz snapshots (*.gradviz.json *.json);;All files (*)</source>
        <translation>스크립트와 스냅숏 (*.py *.json);;Python 스크립트 (*.py);;gradviz 스냅숏 (*.gradviz.json *.json);;모든 파일 (*)</translation>
    </message>
    <message>
        <source>Cannot open file</source>
        <translation>파일을 열 수 없습니다</translation>
    </message>
    <message>
        <source>Nothing was changed.</source>
        <translation>아무것도 바뀌지 않았습니다.</translation>
    </message>
    <message>
        <source>Opened the statements saved in {name}: step to re-run them</source>
        <translation>{name}에 저장된 문장을 열었습니다: 한 단계씩 실행해 다시 돌려 보세요</translation>
    </message>
    <message>
        <source>Opened {name}</source>
        <translation>{name}을(를) 열었습니다</translation>
    </message>
    <message>
        <source>Opened {path}: press Step (F10) to run it as Python</source>
        <translation>{path}을(를) 열었습니다: 한 단계(F10)를 누르면 Python으로 실행합니다</translation>
    </message>
    <message>
        <source>Opened {path}: press Step (F10) to run it in restricted mode</source>
        <translation>{path}을(를) 열었습니다: 한 단계(F10)를 누르면 제한 모드로 실행합니다</translation>
    </message>
    <message>
        <source># Read-only snapshot: {name}
# saved by gradviz (source: {source}) with no script to step.
# {what} · device {device}
#
# F7 / Shift+F7 replay the recorded backward pass on the graph.
# Collapse modules in the Modules panel; Ctrl+F finds a node.
# Open a script (Ctrl+O) or a demo to step forward again.
</source>
        <translation># 읽기 전용 스냅숏: {name}
# gradviz가 저장했으며(출처: {source}) 실행할 스크립트는 없습니다.
# {what} · 장치 {device}
#
# F7 / Shift+F7: 기록된 역전파를 그래프 위에서 재생합니다.
# 모듈 패널에서 모듈을 접을 수 있고, Ctrl+F로 노드를 찾습니다.
# 다시 한 단계씩 실행하려면 스크립트(Ctrl+O)나 데모를 여세요.
</translation>
    </message>
    <message>
        <source>Opened the snapshot {name}: {what}, device {device} (read-only)</source>
        <translation>스냅숏 {name}을(를) 열었습니다: {what}, 장치 {device} (읽기 전용)</translation>
    </message>
    <message>
        <source>Read-only snapshot {name}: press F7 to replay its backward pass</source>
        <translation>읽기 전용 스냅숏 {name}: F7을 누르면 역전파를 재생합니다</translation>
    </message>
    <message>
        <source>Read-only snapshot {name}</source>
        <translation>읽기 전용 스냅숏 {name}</translation>
    </message>
    <message>
        <source>Save script</source>
        <translation>스크립트 저장</translation>
    </message>
    <message>
        <source>Python scripts (*.py)</source>
        <translation>Python 스크립트 (*.py)</translation>
    </message>
    <message>
        <source>Not saved</source>
        <translation>저장하지 않았습니다</translation>
    </message>
    <message>
        <source>Save failed</source>
        <translation>저장하지 못했습니다</translation>
    </message>
    <message>
        <source>Could not write {path}:
{error}</source>
        <translation>{path}에 쓰지 못했습니다:
{error}</translation>
    </message>
    <message>
        <source>Saved {path}</source>
        <translation>{path}에 저장했습니다</translation>
    </message>
    <message>
        <source>(none yet)</source>
        <translation>(아직 없음)</translation>
    </message>
    <message>
        <source>Restored the autosaved text</source>
        <translation>자동 저장된 내용을 복원했습니다</translation>
    </message>
    <message>
        <source>Restored {name} as autosaved before gradviz stopped (not saved yet)</source>
        <translation>gradviz가 종료되기 전에 자동 저장된 {name}을(를) 복원했습니다 (아직 저장하지 않음)</translation>
    </message>
    <message>
        <source>{n} node</source>
        <translation>노드 {n}개</translation>
    </message>
    <message>
        <source>{n} nodes</source>
        <translation>노드 {n}개</translation>
    </message>
    <message>
        <source>{n} backward pass</source>
        <translation>역전파 {n}회</translation>
    </message>
    <message>
        <source>{n} backward passes</source>
        <translation>역전파 {n}회</translation>
    </message>
    <message>
        <source>{name} (read-only)</source>
        <translation>{name} (읽기 전용)</translation>
    </message>
    <message>
        <source>demo: {name}.py</source>
        <translation>데모: {name}.py</translation>
    </message>
    <message>
        <source>untitled.py</source>
        <translation>제목 없음.py</translation>
    </message>
    <message>
        <source>a PNG image</source>
        <extracomment>what a file that is not text most likely is, by its first bytes (the English is the key of its translation, context ``Files``)</extracomment>
        <translation>PNG 이미지</translation>
    </message>
    <message>
        <source>a JPEG image</source>
        <translation>JPEG 이미지</translation>
    </message>
    <message>
        <source>a GIF image</source>
        <translation>GIF 이미지</translation>
    </message>
    <message>
        <source>a PDF document</source>
        <translation>PDF 문서</translation>
    </message>
    <message>
        <source>a zip archive</source>
        <translation>zip 압축 파일</translation>
    </message>
    <message>
        <source>a program (ELF)</source>
        <translation>실행 프로그램(ELF)</translation>
    </message>
    <message>
        <source>a pickle (a saved PyTorch model?)</source>
        <translation>pickle 파일(저장된 PyTorch 모델?)</translation>
    </message>
    <message>
        <source>a NumPy array file</source>
        <translation>NumPy 배열 파일</translation>
    </message>
    <message>
        <source>a gzip archive</source>
        <translation>gzip 압축 파일</translation>
    </message>
    <message>
        <source>it looks like {kind}</source>
        <extracomment>the largest script the editor opens (a model checkpoint opened by mistake is not one)</extracomment>
        <translation>{kind} 같습니다</translation>
    </message>
    <message>
        <source>it is {size} bytes, more than a script</source>
        <translation>크기가 {size}바이트로, 스크립트라고 보기에는 너무 큽니다</translation>
    </message>
    <message>
        <source>{name} is not a script gradviz can open: {what}. Nothing was changed, and the file was not touched.</source>
        <translation>{name} 파일은 gradviz가 열 수 있는 스크립트가 아닙니다: {what}. 아무것도 바꾸지 않았고, 파일에도 손대지 않았습니다.</translation>
    </message>
    <message>
        <source>Cannot open {path}: {error}</source>
        <translation>{path} 파일을 열 수 없습니다: {error}</translation>
    </message>
    <message>
        <source>it is not valid UTF-8 text (byte {byte})</source>
        <translation>올바른 UTF-8 텍스트가 아닙니다 (바이트 위치 {byte})</translation>
    </message>
    <message>
        <source>it holds NUL bytes, so it is not text</source>
        <translation>NUL 바이트가 들어 있어 텍스트가 아닙니다</translation>
    </message>
    <message>
        <source>{name} is not a gradviz snapshot (not JSON: {error})</source>
        <translation>{name} 파일은 gradviz 스냅숏이 아닙니다 (JSON이 아님: {error})</translation>
    </message>
    <message>
        <source>{path} is a folder: nothing was saved</source>
        <translation>{path}: 폴더이므로 아무것도 저장하지 않았습니다</translation>
    </message>
    <message>
        <source>it holds NUL bytes</source>
        <translation>NUL 바이트가 들어 있습니다</translation>
    </message>
    <message>
        <source>it is not UTF-8 text</source>
        <translation>UTF-8 텍스트가 아닙니다</translation>
    </message>
    <message>
        <source>{name} was not overwritten: {why}. Save the script under another name.</source>
        <translation>{name} 파일을 덮어쓰지 않았습니다: {why}. 스크립트를 다른 이름으로 저장하세요.</translation>
    </message>
    <message>
        <source>your edits of the demo &apos;{title}&apos;</source>
        <extracomment>how the prompt names it: ``two_paths.py``, ``the demo &apos;Two paths&apos; (edited)``, … when it was saved, as the prompt shows it</extracomment>
        <translation>데모 &apos;{title}&apos;의 수정본</translation>
    </message>
    <message>
        <source>an untitled script</source>
        <translation>제목 없는 스크립트</translation>
    </message>
</context>
<context>
    <name>Fmt</name>
    <message>
        <source>scalar</source>
        <translation>스칼라</translation>
    </message>
</context>
<context>
    <name>Fonts</name>
    <message>
        <source>Korean</source>
        <extracomment>(first, last code point) -&gt; the writing system, its name, and the Debian/Ubuntu package with a font for it (scripts/setup.sh installs fonts-nanum)</extracomment>
        <translation>한국어</translation>
    </message>
    <message>
        <source>Japanese</source>
        <translation>일본어</translation>
    </message>
    <message>
        <source>Chinese</source>
        <translation>중국어</translation>
    </message>
    <message>
        <source>Cyrillic</source>
        <translation>키릴 문자</translation>
    </message>
    <message>
        <source>Greek</source>
        <translation>그리스 문자</translation>
    </message>
    <message>
        <source>Hebrew</source>
        <translation>히브리 문자</translation>
    </message>
    <message>
        <source>Arabic</source>
        <translation>아랍 문자</translation>
    </message>
    <message>
        <source>Devanagari</source>
        <translation>데바나가리 문자</translation>
    </message>
    <message>
        <source>Thai</source>
        <translation>태국 문자</translation>
    </message>
    <message>
        <source> and </source>
        <translation> 및 </translation>
    </message>
    <message>
        <source>No installed font can show this script&apos;s {names} text (it shows as empty boxes, here and in exported pictures). Install one, then restart gradviz: on Debian or Ubuntu, sudo apt install {packages}</source>
        <translation>이 스크립트의 {names} 글자를 표시할 수 있는 글꼴이 설치되어 있지 않습니다 (여기와 내보낸 그림에서 빈 네모로 보입니다). 글꼴을 설치한 뒤 gradviz를 다시 시작하세요. Debian이나 Ubuntu에서는 sudo apt install {packages}</translation>
    </message>
</context>
<context>
    <name>GraphView</name>
    <message>
        <source>{node} was created by line {line}</source>
        <extracomment>what the state being applied changed (the kernel&apos;s delta), for the canvas (state seq, module tree) of the graph shown: kept while a delta touches no module the pass whose own graph the canvas shows (its nodes are gone from the state&apos;s) graphs with more nodes than this are grouped and laid out on a worker thread</extracomment>
        <translation>{node}은(는) {line}번 줄에서 만들어졌습니다</translation>
    </message>
    <message>
        <source>Expand {name}</source>
        <translation>{name} 펼치기</translation>
    </message>
    <message>
        <source>Collapse module {name}</source>
        <translation>모듈 {name} 접기</translation>
    </message>
    <message>
        <source>Linear chains expanded (View › Collapse linear chains)</source>
        <translation>일렬 연산을 펼쳤습니다 (보기 › 일렬 연산 접기)</translation>
    </message>
    <message>
        <source>Expanded {name}: {n} nodes</source>
        <translation>{name}을(를) 펼쳤습니다: 노드 {n}개</translation>
    </message>
    <message>
        <source>Laying out {n} nodes…</source>
        <translation>노드 {n}개 배치 중…</translation>
    </message>
    <message>
        <source>{n} nodes</source>
        <translation>노드 {n}개</translation>
    </message>
    <message>
        <source>{n} boxes for {total} nodes</source>
        <translation>노드 {total}개를 상자 {n}개로</translation>
    </message>
    <message>
        <source>Laid out {what} in {seconds} s (on a worker thread)</source>
        <translation>{what} 배치를 {seconds}초 만에 마쳤습니다 (작업 스레드에서)</translation>
    </message>
    <message>
        <source>Could not lay out the graph: {message}</source>
        <translation>그래프를 배치하지 못했습니다: {message}</translation>
    </message>
    <message>
        <source>Layout failed: {message}</source>
        <translation>배치 실패: {message}</translation>
    </message>
    <message>
        <source>no match</source>
        <translation>결과 없음</translation>
    </message>
    <message>
        <source>{n} found</source>
        <translation>{n}개 찾음</translation>
    </message>
    <message>
        <source>{n} of {total}</source>
        <translation>{total}개 중 {n}</translation>
    </message>
    <message>
        <source>No node matches &apos;{text}&apos;</source>
        <translation>&apos;{text}&apos;와(과) 맞는 노드가 없습니다</translation>
    </message>
    <message>
        <source>&apos;{text}&apos; ({where}) is inside the collapsed {group}: double-click it to expand</source>
        <translation>&apos;{text}&apos;({where})은(는) 접힌 {group} 안에 있습니다: 더블클릭하면 펼칩니다</translation>
    </message>
    <message>
        <source>Export graph</source>
        <translation>그래프 내보내기</translation>
    </message>
    <message>
        <source>PNG image (*.png);;SVG (*.svg)</source>
        <translation>PNG 이미지 (*.png);;SVG (*.svg)</translation>
    </message>
    <message>
        <source>Export failed</source>
        <translation>내보내지 못했습니다</translation>
    </message>
    <message>
        <source>Graph written to {path}</source>
        <translation>그래프를 {path}에 저장했습니다</translation>
    </message>
</context>
<context>
    <name>Grouping</name>
    <message>
        <source>{n} node</source>
        <translation>노드 {n}개</translation>
    </message>
    <message>
        <source>{n} nodes</source>
        <translation>노드 {n}개</translation>
    </message>
</context>
<context>
    <name>Guide</name>
    <message>
        <source>Demo: {title}</source>
        <extracomment>error types of a statement the learner stopped, paused (gradviz.core.debugger.DebugStopped) or running (gradviz.core.errors.Stopped): its work is kept, Step skips the rest of it the failed result at the cursor, if the last statement that ran failed the text of the line the pause is on a statement the user (or the time limit) stopped: index, line, seconds, message the demo&apos;s ``#&gt;`` notes (line -&gt; text) when its own text is in the editor (shown step, number of steps) when a past timeline step is shown a syntax error of edited text that was not sent (line, message)</extracomment>
        <translation>데모: {title}</translation>
    </message>
    <message>
        <source>untitled script</source>
        <translation>제목 없는 스크립트</translation>
    </message>
    <message>
        <source>F10 steps over, F11 steps into, F7 steps the backward pass; click a node to inspect it</source>
        <translation>F10은 한 단계 실행, F11은 안으로 들어가기, F7은 역전파 한 단계입니다. 노드를 클릭하면 자세히 볼 수 있습니다</translation>
    </message>
    <message>
        <source>Read-only snapshot of {name}: {nodes} · {passes} — open a script to step</source>
        <translation>{name}의 읽기 전용 스냅숏: {nodes} · {passes} — 한 단계씩 실행하려면 스크립트를 여세요</translation>
    </message>
    <message>
        <source>{n} node</source>
        <translation>노드 {n}개</translation>
    </message>
    <message>
        <source>{n} nodes</source>
        <translation>노드 {n}개</translation>
    </message>
    <message>
        <source>{n} backward pass</source>
        <translation>역전파 {n}회</translation>
    </message>
    <message>
        <source>{n} backward passes</source>
        <translation>역전파 {n}회</translation>
    </message>
    <message>
        <source>press F7 to replay the recorded backward pass one engine step at a time. Click a node to inspect it; collapse modules in the Modules panel; Ctrl+F finds a node.</source>
        <translation>F7을 누르면 기록된 역전파를 엔진 단계 하나씩 재생합니다. 노드를 클릭하면 자세히 볼 수 있고, 모듈 패널에서 모듈을 접을 수 있으며, Ctrl+F로 노드를 찾습니다.</translation>
    </message>
    <message>
        <source>click a node to inspect it; collapse modules in the Modules panel; Ctrl+F finds a node. Open a script (Ctrl+O) or a demo to step again.</source>
        <translation>노드를 클릭하면 자세히 볼 수 있고, 모듈 패널에서 모듈을 접을 수 있으며, Ctrl+F로 노드를 찾습니다. 다시 한 단계씩 실행하려면 스크립트(Ctrl+O)나 데모를 여세요.</translation>
    </message>
    <message>
        <source>Snapshot</source>
        <translation>스냅숏</translation>
    </message>
    <message>
        <source>Fix · line {line}</source>
        <translation>고치기 · {line}번 줄</translation>
    </message>
    <message>
        <source>{message}. Nothing ran and the state is kept: fix this line and Step again.</source>
        <translation>{message}. 아무것도 실행되지 않았고 상태는 그대로입니다: 이 줄을 고친 뒤 다시 한 단계 실행하세요.</translation>
    </message>
    <message>
        <source>Timeline · step {n} of {total}</source>
        <translation>타임라인 · {total}단계 중 {n}단계</translation>
    </message>
    <message>
        <source>a kept snapshot of that moment. Step, Run or Step into continue from here (the kernel replays to it); click the last step to come back.</source>
        <translation>그 순간을 보관해 둔 스냅숏입니다. 한 단계, 실행, 안으로 들어가기를 누르면 여기서부터 이어집니다 (커널이 이 지점까지 다시 실행합니다). 마지막 단계를 클릭하면 돌아옵니다.</translation>
    </message>
    <message>
        <source>Paused · line {line}</source>
        <translation>멈춤 · {line}번 줄</translation>
    </message>
    <message>
        <source> runs next. F10 steps over it, F11 steps into it, Shift+F11 finishes the loop or call, F5 runs to the next breakpoint, Shift+F5 stops here.</source>
        <translation> — 다음에 실행할 문장입니다. F10은 한 단계 실행, F11은 안으로 들어가기, Shift+F11은 반복문이나 호출을 끝까지 실행, F5는 다음 중단점까지 실행, Shift+F5는 여기서 중지합니다.</translation>
    </message>
    <message>
        <source>Fix</source>
        <translation>고치기</translation>
    </message>
    <message>
        <source>{kind}: {message}. Nothing ran: fix this line and Step again.</source>
        <translation>{kind}: {message}. 아무것도 실행되지 않았습니다: 이 줄을 고친 뒤 다시 한 단계 실행하세요.</translation>
    </message>
    <message>
        <source>Stopped · line {line}</source>
        <translation>중지됨 · {line}번 줄</translation>
    </message>
    <message>
        <source>{message}. Nothing was rewound. Step skips the rest of this statement; edit it and Step to run it again.</source>
        <translation>{message}. 되돌린 것은 없습니다. 한 단계를 누르면 이 문장의 나머지를 건너뛰고, 문장을 고친 뒤 한 단계를 누르면 다시 실행합니다.</translation>
    </message>
    <message>
        <source>it failed</source>
        <translation>실패했습니다</translation>
    </message>
    <message>
        <source>Line {line} failed</source>
        <translation>{line}번 줄 실패</translation>
    </message>
    <message>
        <source>it ran past the {seconds} s time limit and gradviz stopped it</source>
        <translation>제한 시간 {seconds}초를 넘겨 gradviz가 중지했습니다</translation>
    </message>
    <message>
        <source>you stopped it after {seconds} s</source>
        <translation>{seconds}초 뒤에 사용자가 중지했습니다</translation>
    </message>
    <message>
        <source>{who}; everything before it is kept. Step skips it; edit it first to run it again.</source>
        <translation>{who}. 그 앞의 결과는 모두 남아 있습니다. 한 단계를 누르면 이 문장을 건너뛰고, 고친 뒤에 누르면 다시 실행합니다.</translation>
    </message>
    <message>
        <source>End</source>
        <translation>끝</translation>
    </message>
    <message>
        <source>every statement ran. Press F7 to step through the backward pass, one engine step at a time (pick any pass in the Backward passes panel).</source>
        <translation>모든 문장을 실행했습니다. F7을 누르면 역전파를 엔진 단계 하나씩 따라갑니다 (역전파 기록 패널에서 원하는 역전파를 고를 수 있습니다).</translation>
    </message>
    <message>
        <source>every statement ran.</source>
        <translation>모든 문장을 실행했습니다.</translation>
    </message>
    <message>
        <source>every statement ran. Reset (Ctrl+R) to start over.</source>
        <translation>모든 문장을 실행했습니다. 처음부터 다시 하려면 처음으로(Ctrl+R)를 누르세요.</translation>
    </message>
    <message>
        <source>Type PyTorch code in the editor, then press Step (F10).</source>
        <translation>편집기에 PyTorch 코드를 입력한 뒤 한 단계(F10)를 누르세요.</translation>
    </message>
    <message>
        <source>Next · line {line}</source>
        <translation>다음 · {line}번 줄</translation>
    </message>
    <message>
        <source>Just ran · line {line}</source>
        <translation>방금 실행 · {line}번 줄</translation>
    </message>
    <message>
        <source>iteration {n}</source>
        <translation>{n}번째 반복</translation>
    </message>
    <message>
        <source>iteration {n} of {total}</source>
        <translation>{total}번 중 {n}번째 반복</translation>
    </message>
    <message>
        <source>The script does not parse (line {line}): {message}</source>
        <translation>스크립트를 해석할 수 없습니다 ({line}번 줄): {message}</translation>
    </message>
    <message>
        <source>Paused before line {line}</source>
        <translation>{line}번 줄 앞에서 멈춤</translation>
    </message>
    <message>
        <source> in {frame}</source>
        <translation> ({frame} 안)</translation>
    </message>
    <message>
        <source>: F10 over, F11 into, Shift+F11 out, F5 continue, Shift+F5 stop</source>
        <translation>: F10 한 단계, F11 들어가기, Shift+F11 나가기, F5 계속, Shift+F5 중지</translation>
    </message>
    <message>
        <source>{message}; Step skips the rest of line {line}</source>
        <translation>{message}. 한 단계를 누르면 {line}번 줄의 나머지를 건너뜁니다</translation>
    </message>
    <message>
        <source>Line {line} failed: {type}: {message}</source>
        <translation>{line}번 줄 실패: {type}: {message}</translation>
    </message>
    <message>
        <source>Zeroed .grad of {names}</source>
        <translation>{names}의 .grad를 0으로 만들었습니다</translation>
    </message>
    <message>
        <source>No leaf has a .grad to zero</source>
        <translation>0으로 만들 .grad가 있는 리프 텐서가 없습니다</translation>
    </message>
    <message>
        <source>Reset: nothing has run yet. Step (F10) runs the first statement.</source>
        <translation>처음으로 돌아갔습니다: 아직 아무것도 실행하지 않았습니다. 한 단계(F10)를 누르면 첫 문장을 실행합니다.</translation>
    </message>
    <message>
        <source>Loaded: nothing has run yet. Step (F10) runs the first statement.</source>
        <translation>불러왔습니다: 아직 아무것도 실행하지 않았습니다. 한 단계(F10)를 누르면 첫 문장을 실행합니다.</translation>
    </message>
    <message>
        <source>Ran line {line} — backward() ran: press F7 to step through it</source>
        <translation>{line}번 줄을 실행했습니다 — backward()가 실행되었습니다: F7을 누르면 한 단계씩 따라갑니다</translation>
    </message>
    <message>
        <source>Ran line {line}</source>
        <translation>{line}번 줄을 실행했습니다</translation>
    </message>
    <message>
        <source>Ran {n} statements (lines {first}–{last})</source>
        <translation>문장 {n}개를 실행했습니다 ({first}–{last}번 줄)</translation>
    </message>
    <message>
        <source>At the end of the script</source>
        <translation>스크립트 끝입니다</translation>
    </message>
    <message>
        <source>Ready</source>
        <translation>준비됨</translation>
    </message>
    <message>
        <source>paused at line {line}</source>
        <translation>{line}번 줄에서 멈춤</translation>
    </message>
    <message>
        <source>statement {n} of {total} run</source>
        <translation>문장 {total}개 중 {n}개 실행</translation>
    </message>
    <message>
        <source>no statements</source>
        <translation>문장 없음</translation>
    </message>
    <message>
        <source> and </source>
        <translation> 및 </translation>
    </message>
    <message>
        <source>line {line}</source>
        <translation>{line}번 줄</translation>
    </message>
    <message>
        <source> receives {grads}</source>
        <translation>이(가) {grads}을(를) 받아</translation>
    </message>
    <message>
        <source> and passes {sent}</source>
        <translation> 다음과 같이 전달합니다: {sent}</translation>
    </message>
    <message>
        <source> and adds it into {into}</source>
        <translation> {into}에 더합니다</translation>
    </message>
    <message>
        <source>. That was the last recorded step: F7 ends the replay.</source>
        <translation>. 기록된 마지막 단계였습니다: F7을 누르면 재생을 마칩니다.</translation>
    </message>
    <message>
        <source>Backward #{n}{place} · step {step} of {total}</source>
        <translation>역전파 #{n}{place} · {total}단계 중 {step}단계</translation>
    </message>
    <message>
        <source>Backward pass #{n}: step {step} of {total} ({label})</source>
        <translation>역전파 #{n}: {total}단계 중 {step}단계 ({label})</translation>
    </message>
    <message>
        <source>Guide</source>
        <extracomment>a tag&apos;s role (see gradviz.app.guide.Tag) -&gt; its background colour</extracomment>
        <translation>안내</translation>
    </message>
    <message>
        <source>Lesson</source>
        <translation>학습 내용</translation>
    </message>
    <message>
        <source>What happens next</source>
        <translation>다음에 일어날 일</translation>
    </message>
</context>
<context>
    <name>HtmlView</name>
    <message>
        <source>Fit</source>
        <translation>맞춤</translation>
    </message>
    <message>
        <source>Fit the graph to the window (0)</source>
        <translation>그래프 전체를 창에 맞춥니다 (0)</translation>
    </message>
    <message>
        <source>Zoom in (+ or the mouse wheel)</source>
        <translation>확대 (+ 또는 마우스 휠)</translation>
    </message>
    <message>
        <source>Zoom out (-)</source>
        <translation>축소 (-)</translation>
    </message>
    <message>
        <source>Which picture of the graph: expanded, or grouped</source>
        <translation>그래프를 어떻게 보여 줄지: 모두 펼치거나 묶어서</translation>
    </message>
    <message>
        <source>Find a node (/)</source>
        <translation>노드 찾기 (/)</translation>
    </message>
    <message>
        <source>Find a node: a name, an op, a module or a shape (Enter: the next one)</source>
        <translation>이름, 연산, 모듈, shape로 노드를 찾습니다 (Enter: 다음 결과)</translation>
    </message>
    <message>
        <source>Backward passes</source>
        <translation>역전파 기록</translation>
    </message>
    <message>
        <source>Before the first pass (Home)</source>
        <translation>첫 역전파 전으로 (Home)</translation>
    </message>
    <message>
        <source>Back to the end of the previous pass (Shift+Left, Page Up)</source>
        <translation>이전 역전파의 끝으로 돌아갑니다 (Shift+←, Page Up)</translation>
    </message>
    <message>
        <source>Back one step (Left)</source>
        <translation>한 단계 뒤로 (←)</translation>
    </message>
    <message>
        <source>One engine step (Right)</source>
        <translation>엔진 한 단계 실행 (→)</translation>
    </message>
    <message>
        <source>To the end of this pass, then of the next (Shift+Right, Page Down)</source>
        <translation>이 역전파의 끝으로, 그다음엔 다음 역전파의 끝으로 (Shift+→, Page Down)</translation>
    </message>
    <message>
        <source>After the last pass (End)</source>
        <translation>마지막 역전파 뒤로 (End)</translation>
    </message>
    <message>
        <source>Jump to a pass</source>
        <translation>역전파로 바로 가기</translation>
    </message>
    <message>
        <source>Inspector</source>
        <translation>노드 정보</translation>
    </message>
    <message>
        <source>Leaf .grad</source>
        <translation>리프 텐서의 .grad</translation>
    </message>
    <message>
        <source>Modules</source>
        <translation>모듈</translation>
    </message>
    <message>
        <source>gradviz interactive graph</source>
        <translation>gradviz 대화형 계산 그래프</translation>
    </message>
    <message>
        <source>gradviz: this notebook is not trusted, so its interactive graph is hidden. Trust the notebook (File &gt; Trust Notebook) or run the cell again to see it; the static picture is in the same output as SVG.</source>
        <translation>gradviz: 이 노트북은 신뢰할 수 없는 상태라서 대화형 계산 그래프를 숨겼습니다. 노트북을 신뢰하거나(File &gt; Trust Notebook) 셀을 다시 실행하면 보입니다. 정적인 그림은 같은 출력에 SVG로 들어 있습니다.</translation>
    </message>
    <message>
        <source>the graph has {nodes} nodes and {edges} edges, more than an HTML page takes ({limit} nodes + edges): building it would take minutes and hundreds of MB. Export it as .svg, .json or .graphml instead, or open it in the window (gradviz open)</source>
        <translation>그래프에 노드 {nodes}개와 간선 {edges}개가 있어 HTML 페이지 하나에 담을 수 있는 양(노드 + 간선 {limit}개)을 넘습니다: 만드는 데 몇 분, 메모리 수백 MB가 듭니다. 대신 .svg, .json, .graphml로 내보내거나 창에서 여세요 (gradviz open)</translation>
    </message>
    <message>
        <source>autograd graph, {n} node</source>
        <translation>autograd 계산 그래프, 노드 {n}개</translation>
    </message>
    <message>
        <source>autograd graph, {n} nodes</source>
        <translation>autograd 계산 그래프, 노드 {n}개</translation>
    </message>
    <message>
        <source>Everything expanded</source>
        <translation>모두 펼침</translation>
    </message>
    <message>
        <source>Modules collapsed</source>
        <translation>모듈 접음</translation>
    </message>
    <message>
        <source>Linear chains collapsed</source>
        <translation>일렬 연산 접음</translation>
    </message>
    <message>
        <source>No collapsed-modules picture: collapsing the one top block would hide only {hidden} of {total} nodes.</source>
        <translation>모듈을 접은 그림은 없습니다: 최상위 블록 하나를 접어도 노드 {total}개 중 {hidden}개만 숨겨집니다.</translation>
    </message>
    <message>
        <source>No collapsed-modules picture: collapsing the {blocks} top blocks would hide only {hidden} of {total} nodes.</source>
        <translation>모듈을 접은 그림은 없습니다: 최상위 블록 {blocks}개를 접어도 노드 {total}개 중 {hidden}개만 숨겨집니다.</translation>
    </message>
    <message>
        <source>No collapsed-modules picture: it would make the page too big.</source>
        <translation>모듈을 접은 그림은 없습니다: 페이지가 너무 커집니다.</translation>
    </message>
    <message>
        <source>No collapsed-chains picture: it would hide only {hidden} of {total} nodes.</source>
        <translation>일렬 연산을 접은 그림은 없습니다: 노드 {total}개 중 {hidden}개만 숨겨집니다.</translation>
    </message>
    <message>
        <source>No collapsed-chains picture: it would make the page too big.</source>
        <translation>일렬 연산을 접은 그림은 없습니다: 페이지가 너무 커집니다.</translation>
    </message>
    <message>
        <source>{n} grouped picture left out: building the page ran past its {seconds} s time budget.</source>
        <translation>묶은 그림 {n}개를 뺐습니다: 페이지를 만드는 데 주어진 시간 {seconds}초를 넘겼습니다.</translation>
    </message>
    <message>
        <source>{n} grouped pictures left out: building the page ran past its {seconds} s time budget.</source>
        <translation>묶은 그림 {n}개를 뺐습니다: 페이지를 만드는 데 주어진 시간 {seconds}초를 넘겼습니다.</translation>
    </message>
    <message>
        <source>backward #{n}</source>
        <translation>역전파 #{n}</translation>
    </message>
    <message>
        <source>grad #{n}</source>
        <translation>autograd.grad 호출 #{n}</translation>
    </message>
    <message>
        <source>zeroed</source>
        <translation>0으로 만듦</translation>
    </message>
    <message>
        <source>assigned</source>
        <translation>대입함</translation>
    </message>
    <message>
        <source>set to None</source>
        <translation>None으로 설정</translation>
    </message>
    <message>
        <source>as saved</source>
        <translation>저장된 값</translation>
    </message>
    <message>
        <source>{n} node</source>
        <translation>노드 {n}개</translation>
    </message>
    <message>
        <source>{n} nodes</source>
        <translation>노드 {n}개</translation>
    </message>
    <message>
        <source>backward step</source>
        <translation>역전파 단계</translation>
    </message>
    <message>
        <source>{title} · {n} backward pass</source>
        <translation>{title} · 역전파 {n}번</translation>
    </message>
    <message>
        <source>{title} · {n} backward passes</source>
        <translation>{title} · 역전파 {n}번</translation>
    </message>
    <message>
        <source>{block} open</source>
        <translation>{block} 펼침</translation>
    </message>
    <message>
        <source>{pass}: {where}</source>
        <translation>{pass}: {where}</translation>
    </message>
    <message>
        <source>{pass} (fails)</source>
        <translation>{pass} (실패)</translation>
    </message>
    <message>
        <source>after the last pass</source>
        <translation>마지막 역전파 뒤</translation>
    </message>
    <message>
        <source>{n} box</source>
        <translation>상자 {n}개</translation>
    </message>
    <message>
        <source>{n} boxes</source>
        <translation>상자 {n}개</translation>
    </message>
    <message>
        <source>{n} edge</source>
        <translation>간선 {n}개</translation>
    </message>
    <message>
        <source>{n} edges</source>
        <translation>간선 {n}개</translation>
    </message>
    <message>
        <source>zoom {zoom}%</source>
        <translation>배율 {zoom}%</translation>
    </message>
    <message>
        <source>zoom in for labels</source>
        <translation>확대하면 이름이 보입니다</translation>
    </message>
    <message>
        <source>some edges drawn unrouted (routing ran past its time)</source>
        <translation>일부 간선은 경로를 잡지 않고 그렸습니다 (경로 계산 시간 초과)</translation>
    </message>
    <message>
        <source>no node matches “{text}”</source>
        <translation>“{text}”와(과) 맞는 노드가 없습니다</translation>
    </message>
    <message>
        <source>{source} (line {line})</source>
        <translation>{source} ({line}번 줄)</translation>
    </message>
    <message>
        <source>{source} (line {line}, iteration {n})</source>
        <translation>{source} ({line}번 줄, {n}번째 반복)</translation>
    </message>
    <message>
        <source>graph of backward #{n}</source>
        <translation>역전파 #{n}의 그래프</translation>
    </message>
    <message>
        <source>Drawn from what this pass recorded: the graph it ran over was freed before the last one was built, which the other pictures show.</source>
        <translation>이 역전파가 기록한 내용으로 그렸습니다. 이 역전파가 지나간 그래프는 마지막 그래프가 만들어지기 전에 해제되었고, 다른 그림은 그 마지막 그래프를 보여 줍니다.</translation>
    </message>
    <message>
        <source>This pass ran over an earlier graph, which the page does not hold: it is replayed on the last graph, where only the nodes both share light up.</source>
        <translation>이 역전파는 이 페이지에 없는 이전 그래프를 지나갔습니다. 마지막 그래프 위에서 다시 보여 주므로, 두 그래프가 함께 가진 노드만 강조됩니다.</translation>
    </message>
    <message>
        <source>a node of this pass&apos;s own graph</source>
        <translation>이 역전파가 쓴 그래프의 노드</translation>
    </message>
    <message>
        <source>{node} received {grads} and sends {sends}</source>
        <translation>{node}이(가) {grads}을(를) 받아 보냅니다: {sends}</translation>
    </message>
    <message>
        <source>{node} received {grads} and adds it into .grad</source>
        <translation>{node}이(가) {grads}을(를) 받아 .grad에 더합니다</translation>
    </message>
    <message>
        <source>{node} received {grads}</source>
        <translation>{node}이(가) {grads}을(를) 받았습니다</translation>
    </message>
    <message>
        <source>No backward pass was recorded: there is nothing to replay.</source>
        <translation>기록된 역전파가 없어 재생할 것이 없습니다.</translation>
    </message>
    <message>
        <source>after pass {k} of {n}</source>
        <translation>역전파 {n}번 중 {k}번째가 끝난 뒤</translation>
    </message>
    <message>
        <source>The end: every pass has run; .grad holds what was saved.</source>
        <translation>끝: 모든 역전파를 실행했습니다. .grad에는 저장된 값이 들어 있습니다.</translation>
    </message>
    <message>
        <source>pass {k} of {n} · step {step} of {steps}</source>
        <translation>역전파 {n}번 중 {k}번째 · {steps}단계 중 {step}단계</translation>
    </message>
    <message>
        <source>Failed: {error}</source>
        <translation>실패: {error}</translation>
    </message>
    <message>
        <source>Ready: ▶ (or →) runs its first engine step.</source>
        <translation>준비됨: ▶(또는 →)를 누르면 엔진의 첫 단계를 실행합니다.</translation>
    </message>
    <message>
        <source>Pass done.</source>
        <translation>역전파 완료.</translation>
    </message>
    <message>
        <source>Pass done. {grads}</source>
        <translation>역전파 완료. {grads}</translation>
    </message>
    <message>
        <source>{grads}, … ({n} leaves)</source>
        <translation>{grads}, … (리프 텐서 {n}개)</translation>
    </message>
    <message>
        <source>Then failed: {error}</source>
        <translation>그 뒤 실패: {error}</translation>
    </message>
    <message>
        <source>No leaf received a gradient.</source>
        <translation>기울기를 받은 리프 텐서가 없습니다.</translation>
    </message>
    <message>
        <source>leaf</source>
        <translation>리프 텐서</translation>
    </message>
    <message>
        <source>.grad now</source>
        <translation>현재 .grad</translation>
    </message>
    <message>
        <source>after</source>
        <translation>시점</translation>
    </message>
    <message>
        <source>No plottable .grad history (summaries of big tensors).</source>
        <translation>차트로 그릴 .grad 기록이 없습니다 (큰 텐서는 요약만 남습니다).</translation>
    </message>
    <message>
        <source>.grad after each event: {names}</source>
        <translation>이벤트마다 바뀐 .grad: {names}</translation>
    </message>
    <message>
        <source>‖.grad‖ (norm) after each event: {names}</source>
        <translation>이벤트마다 바뀐 ‖.grad‖ (노름): {names}</translation>
    </message>
    <message>
        <source>{name}.grad = {value} ({when})</source>
        <translation>{name}.grad = {value} ({when})</translation>
    </message>
    <message>
        <source>{name}.grad norm = {value} ({when})</source>
        <translation>{name}.grad 노름 = {value} ({when})</translation>
    </message>
    <message>
        <source>Click a node to inspect it. Drag to pan, wheel to zoom; ← → step the backward pass.</source>
        <translation>노드를 클릭하면 자세히 볼 수 있습니다. 드래그하면 이동, 휠을 굴리면 확대·축소, ← →는 역전파를 한 단계씩 진행합니다.</translation>
    </message>
    <message>
        <source>linear chain</source>
        <translation>일렬 연산</translation>
    </message>
    <message>
        <source>collapsed module</source>
        <translation>접힌 모듈</translation>
    </message>
    <message>
        <source>nodes</source>
        <translation>노드</translation>
    </message>
    <message>
        <source>ops</source>
        <translation>연산</translation>
    </message>
    <message>
        <source>pass {n}</source>
        <translation>역전파 #{n}</translation>
    </message>
    <message>
        <source>{done} of {total} steps run</source>
        <translation>{total}단계 중 {done}단계 실행</translation>
    </message>
    <message>
        <source>Expand</source>
        <translation>펼치기</translation>
    </message>
    <message>
        <source>Show the nodes inside (double-click)</source>
        <translation>안에 든 노드를 보여 줍니다 (더블클릭)</translation>
    </message>
    <message>
        <source>scalar</source>
        <translation>스칼라</translation>
    </message>
    <message>
        <source>saved tensor</source>
        <translation>저장된 텐서</translation>
    </message>
    <message>
        <source>variables</source>
        <translation>변수</translation>
    </message>
    <message>
        <source>module</source>
        <translation>모듈</translation>
    </message>
    <message>
        <source>storage</source>
        <translation>스토리지</translation>
    </message>
    <message>
        <source>created by</source>
        <translation>만든 곳</translation>
    </message>
    <message>
        <source>line {line}: {source}</source>
        <translation>{line}번 줄: {source}</translation>
    </message>
    <message>
        <source>Saved for backward</source>
        <translation>역전파용으로 저장된 값</translation>
    </message>
    <message>
        <source>Saved for backward (freed)</source>
        <translation>역전파용으로 저장된 값 (해제됨)</translation>
    </message>
    <message>
        <source>tensor</source>
        <translation>텐서</translation>
    </message>
    <message>
        <source>stale</source>
        <translation>버전 불일치</translation>
    </message>
    <message>
        <source>freed by backward</source>
        <translation>backward()가 해제함</translation>
    </message>
    <message>
        <source>nothing</source>
        <translation>없음</translation>
    </message>
    <message>
        <source>value</source>
        <translation>값</translation>
    </message>
    <message>
        <source>grad (as saved)</source>
        <translation>grad (저장된 값)</translation>
    </message>
    <message>
        <source>{name}.grad now</source>
        <translation>현재 {name}.grad</translation>
    </message>
    <message>
        <source>In {pass}</source>
        <translation>{pass}에서</translation>
    </message>
    <message>
        <source>The engine does not run this node in this pass.</source>
        <translation>이 역전파에서 엔진은 이 노드를 실행하지 않습니다.</translation>
    </message>
    <message>
        <source>ran at step {n}</source>
        <translation>{n}단계에서 실행됨</translation>
    </message>
    <message>
        <source>running now (step {n})</source>
        <translation>지금 실행 중 ({n}단계)</translation>
    </message>
    <message>
        <source>runs at step {n}</source>
        <translation>{n}단계에서 실행 예정</translation>
    </message>
    <message>
        <source>status</source>
        <translation>상태</translation>
    </message>
    <message>
        <source>grad in</source>
        <translation>받은 기울기</translation>
    </message>
    <message>
        <source>grad in [{n}]</source>
        <translation>받은 기울기 [{n}]</translation>
    </message>
    <message>
        <source>grad out → {target}</source>
        <translation>보낸 기울기 → {target}</translation>
    </message>
    <message>
        <source>grad out</source>
        <translation>보낸 기울기</translation>
    </message>
    <message>
        <source>added into .grad</source>
        <translation>.grad에 더함</translation>
    </message>
    <message>
        <source>Collapse {block}</source>
        <translation>{block} 접기</translation>
    </message>
    <message>
        <source>Show this block as one box again</source>
        <translation>이 블록을 다시 상자 하나로 보여 줍니다</translation>
    </message>
    <message>
        <source>Collapse all</source>
        <translation>모두 접기</translation>
    </message>
    <message>
        <source>Each top block as one box</source>
        <translation>최상위 블록마다 상자 하나로</translation>
    </message>
    <message>
        <source>Collapse chains</source>
        <translation>일렬 연산 접기</translation>
    </message>
    <message>
        <source>Each run of one-to-one ops as one box</source>
        <translation>일대일로 이어진 연산마다 상자 하나로</translation>
    </message>
    <message>
        <source>Expand all</source>
        <translation>모두 펼치기</translation>
    </message>
    <message>
        <source>Every node</source>
        <translation>모든 노드</translation>
    </message>
    <message>
        <source>Open this block (the others stay collapsed)</source>
        <translation>이 블록을 펼칩니다 (다른 블록은 접힌 채로)</translation>
    </message>
    <message>
        <source>Too many blocks to open one at a time: use Expand all.</source>
        <translation>블록이 너무 많아 하나씩 펼칠 수 없습니다: 모두 펼치기를 쓰세요.</translation>
    </message>
</context>
<context>
    <name>KernelClient</name>
    <message>
        <source>the kernel was replaced: the script&apos;s trust changed</source>
        <extracomment>characters of one streamed print kept (the statement&apos;s result carries it whole) give up restarting after this many exits in a row without a good reply the kernel said hello: {&quot;pid&quot;, &quot;cuda_available&quot;, &quot;cuda_reason&quot;} every reply: request id, the whole reply message progress of the request in flight: done, total print output of the running statement, as it is written (text, line or None) True while a request is in flight or waiting, or the kernel is starting the kernel exited unexpectedly; the message says how (a restart follows) a fresh kernel is being started: why (&quot;stopped&quot;, &quot;crashed&quot;) the replay after a restart finished: its reply (ok, state or message) restarting was abandoned after repeated crashes the watchdog killed the kernel: a phase outlived its time limit (message, phase) refuse a restricted kernel with no OS layer (runner.os_layer_missing); a kernel program given by hand (a test&apos;s fake, a developer&apos;s) is taken as is the start of a line not ended yet (never more than max_line_bytes) counts kernels started and killed: a line handled during feed() that restarted the kernel ends that feed (the rest was the old kernel&apos;s) a stdout line longer than this kills the kernel (tests make it small) a kernel killed for what it wrote, until it is gone rebuilds whole states from the kernel&apos;s deltas (gradviz.graph.delta) cursors of Zero-grad presses in the running session (replayed after a restart) trusted: the kernel runs the script as real Python, unconfined, in ``cwd`` (the script&apos;s folder), with no time limit (Stop ends it); else restricted the script&apos;s file, sent with each load in trusted mode (tracebacks, debugger) seconds a statement may run (None: the kernel&apos;s default); sent with every load seconds one whole request may take (None: runner.total_limit&apos;s default) seconds a phase may run past its limit the limit the phase in progress runs under, and whether the watchdog&apos;s next deadline is the request&apos;s total rather than the phase&apos;s the statement limit the running kernel&apos;s session was given (by a load)</extracomment>
        <translation>커널을 교체했습니다: 스크립트의 신뢰 설정이 바뀌었습니다</translation>
    </message>
    <message>
        <source>the kernel is not running (it crashed repeatedly); press Reset</source>
        <translation>커널이 실행되고 있지 않습니다 (계속 비정상 종료되었습니다). 처음으로를 누르세요</translation>
    </message>
    <message>
        <source>bad line from kernel: {line}</source>
        <extracomment>requests whose statements the kernel can end gently (Stop keeps their work)</extracomment>
        <translation>커널이 보낸 잘못된 줄: {line}</translation>
    </message>
    <message>
        <source>refused: the kernel wrote a line of over {size} bytes (gradviz reads at most {limit} a line)</source>
        <translation>거부함: 커널이 {size}바이트가 넘는 줄을 보냈습니다 (gradviz는 한 줄에 최대 {limit}바이트까지 읽습니다)</translation>
    </message>
    <message>
        <source>the kernel crashed (native code in the script or a library failed)</source>
        <translation>커널이 비정상 종료되었습니다 (스크립트나 라이브러리의 네이티브 코드가 실패했습니다)</translation>
    </message>
    <message>
        <source>the kernel crashed (native code in the script or a library failed) while line {line} ran</source>
        <translation>{line}번 줄을 실행하는 중에 커널이 비정상 종료되었습니다 (스크립트나 라이브러리의 네이티브 코드가 실패했습니다)</translation>
    </message>
    <message>
        <source>the kernel exited with code {code}</source>
        <translation>커널이 끝났습니다 (종료 코드 {code})</translation>
    </message>
    <message>
        <source>the kernel exited with code {code} while line {line} ran</source>
        <translation>{line}번 줄을 실행하는 중에 커널이 끝났습니다 (종료 코드 {code})</translation>
    </message>
</context>
<context>
    <name>Legend</name>
    <message>
        <source>op (grad_fn)</source>
        <extracomment>the legend&apos;s names of the node kinds, as gradviz.graph.style writes them (the key the window translates them by; tests/test_i18n.py checks each one has its entry)</extracomment>
        <translation>연산 (grad_fn)</translation>
    </message>
    <message>
        <source>leaf, requires grad</source>
        <translation>리프 텐서, requires_grad</translation>
    </message>
    <message>
        <source>computed tensor</source>
        <translation>계산된 텐서</translation>
    </message>
    <message>
        <source>tensor, no grad</source>
        <translation>텐서, 기울기 없음</translation>
    </message>
    <message>
        <source>saved for backward</source>
        <translation>역전파용 저장</translation>
    </message>
    <message>
        <source>module / chain</source>
        <translation>모듈 / 연결</translation>
    </message>
    <message>
        <source>new this step</source>
        <extracomment>where each row was placed in the last layout: (x, y, row)</extracomment>
        <translation>이번 단계에 새로 생김</translation>
    </message>
    <message>
        <source>running (backward)</source>
        <translation>실행 중 (역전파)</translation>
    </message>
    <message>
        <source>already ran</source>
        <translation>이미 실행됨</translation>
    </message>
    <message>
        <source>gradient flowing</source>
        <translation>기울기 흐름</translation>
    </message>
    <message>
        <source>freed by backward()</source>
        <translation>backward()가 해제함</translation>
    </message>
    <message>
        <source>stale: changed in place</source>
        <translation>버전 불일치: 제자리 연산으로 바뀜</translation>
    </message>
    <message>
        <source>shares memory</source>
        <translation>메모리 공유</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>read-only snapshot</source>
        <extracomment>on a shrink, a panel keeps its old height up to this share of the window freeze the heap after each step (gc.freeze): only in gradviz&apos;s own process, never inside a host program that called the library (see gradviz.ui.app) the kernel&apos;s last state shown (or a snapshot&apos;s) as it came (the wire dict: what a snapshot saves); None before the first reply the same state, typed: what every widget reads what the editor holds: a file, a demo, or a read-only snapshot the note that no installed font shows the script&apos;s letters: once a session the panels&apos; and the editor&apos;s shares of the window, at the size they were seen folders whose banner was answered &quot;Keep restricted&quot; in this session the panels that show the whole state (set_state)</extracomment>
        <translation>읽기 전용 스냅숏</translation>
    </message>
    <message>
        <source>device: {device}</source>
        <translation>장치: {device}</translation>
    </message>
    <message>
        <source>No backward pass to step through yet: F7 shows backward() node by node once a statement has called backward() or torch.autograd.grad (F10 steps to it)</source>
        <translation>아직 따라갈 역전파가 없습니다: 어떤 문장이 backward()나 torch.autograd.grad를 호출하고 나면 F7로 backward()를 노드 단위로 볼 수 있습니다 (F10으로 그 문장까지 가세요)</translation>
    </message>
    <message>
        <source>Trusted {folder}: its scripts run as Python from now on</source>
        <extracomment>the editor&apos;s share of the editor/canvas split before a snapshot narrowed it</extracomment>
        <translation>{folder}을(를) 신뢰합니다: 이제부터 이 폴더의 스크립트는 Python으로 실행됩니다</translation>
    </message>
    <message>
        <source>Trusted {folder}: press Step (F10) to run the script as Python</source>
        <translation>{folder}을(를) 신뢰합니다: 한 단계(F10)를 누르면 스크립트를 Python으로 실행합니다</translation>
    </message>
</context>
<context>
    <name>Panels</name>
    <message>
        <source>Hint</source>
        <translation>도움말</translation>
    </message>
    <message>
        <source>name</source>
        <extracomment>what the learner reads first (value, grad, shape) comes first; the less used after the column headers a learner reads in their language (PyTorch&apos;s own attribute names, requires_grad, is_leaf, grad_fn, dtype…, stay as PyTorch spells them)</extracomment>
        <translation>이름</translation>
    </message>
    <message>
        <source>value</source>
        <translation>값</translation>
    </message>
    <message>
        <source>shape</source>
        <translation>shape</translation>
    </message>
    <message>
        <source>version</source>
        <translation>버전</translation>
    </message>
    <message>
        <source>storage</source>
        <translation>스토리지</translation>
    </message>
    <message>
        <source>leaf</source>
        <translation>리프 텐서</translation>
    </message>
    <message>
        <source>after</source>
        <translation>시점</translation>
    </message>
    <message>
        <source>line</source>
        <translation>줄</translation>
    </message>
    <message>
        <source>module</source>
        <translation>모듈</translation>
    </message>
    <message>
        <source>nodes</source>
        <translation>노드</translation>
    </message>
    <message>
        <source>Tensors</source>
        <extracomment>widest a fitted column gets before its text is elided (the tooltip has it whole)</extracomment>
        <translation>텐서</translation>
    </message>
    <message>
        <source>Tensors table</source>
        <translation>텐서 표</translation>
    </message>
    <message>
        <source>One row per variable holding a tensor: value, .grad, shape, grad_fn and flags</source>
        <translation>텐서를 담은 변수마다 한 행: 값, .grad, shape, grad_fn과 플래그</translation>
    </message>
    <message>
        <source>No tensors yet: step (F10) through a script to create some.</source>
        <translation>아직 텐서가 없습니다: 스크립트를 한 단계씩(F10) 실행해 만들어 보세요.</translation>
    </message>
    <message>
        <source>Tensors hint</source>
        <translation>텐서 도움말</translation>
    </message>
    <message>
        <source>{name}: a local variable of the paused frame ({frame}), listed before the script&apos;s globals</source>
        <translation>{name}: 멈춘 프레임({frame})의 지역 변수로, 스크립트의 전역 변수보다 먼저 나옵니다</translation>
    </message>
    <message>
        <source>{name} shares memory with {others}: writing one changes the other</source>
        <translation>{name}은(는) {others}와(과) 메모리를 공유합니다: 한쪽에 쓰면 다른 쪽도 바뀝니다</translation>
    </message>
    <message>
        <source>t._version: in-place writes bump it (inference tensors keep none)</source>
        <translation>t._version: 제자리 연산으로 쓸 때마다 올라갑니다 (inference 텐서에는 없습니다)</translation>
    </message>
    <message>
        <source>Plot</source>
        <extracomment>each point&apos;s x in slot units (slot i is centred on x = i); None: point i at slot i</extracomment>
        <translation>차트</translation>
    </message>
    <message>
        <source>nothing to plot yet</source>
        <extracomment>what the x axis counts (``backward pass``), written under its labels the x slots&apos; labels; None: the longest series&apos; point labels</extracomment>
        <translation>아직 그릴 것이 없습니다</translation>
    </message>
    <message>
        <source>zeroed</source>
        <translation>0으로 만듦</translation>
    </message>
    <message>
        <source>assigned</source>
        <translation>대입함</translation>
    </message>
    <message>
        <source>set to None</source>
        <translation>None으로 설정</translation>
    </message>
    <message>
        <source>Gradient accumulation</source>
        <extracomment>what the table and plot show now (a state that changes none of it redraws nothing)</extracomment>
        <translation>기울기 누적</translation>
    </message>
    <message>
        <source>Gradient accumulation table</source>
        <translation>기울기 누적 표</translation>
    </message>
    <message>
        <source>Gradient accumulation plot</source>
        <translation>기울기 누적 차트</translation>
    </message>
    <message>
        <source>x.grad after each backward() shows here</source>
        <translation>backward()를 호출할 때마다 x.grad가 여기에 나옵니다</translation>
    </message>
    <message>
        <source>backward() adds into .grad: run it twice (retain_graph=True) and the value doubles.</source>
        <translation>backward()는 .grad에 더합니다: 두 번 실행하면(retain_graph=True) 값이 두 배가 됩니다.</translation>
    </message>
    <message>
        <source>Gradient accumulation hint</source>
        <translation>기울기 누적 도움말</translation>
    </message>
    <message>
        <source>Gradient accumulation table and plot</source>
        <translation>기울기 누적 표와 차트</translation>
    </message>
    <message>
        <source> (iteration {n})</source>
        <translation> ({n}번째 반복)</translation>
    </message>
    <message>
        <source>zero</source>
        <translation>0으로</translation>
    </message>
    <message>
        <source>backward pass</source>
        <translation>역전파</translation>
    </message>
    <message>
        <source>event</source>
        <translation>이벤트</translation>
    </message>
    <message>
        <source>‖.grad‖ of each leaf (norm)</source>
        <translation>리프 텐서별 ‖.grad‖ (노름)</translation>
    </message>
    <message>
        <source>.grad of each leaf</source>
        <translation>리프 텐서별 .grad</translation>
    </message>
    <message>
        <source>bytes this statement allocated (new tensors, outputs)</source>
        <translation>이 문장이 할당한 바이트 (새 텐서, 출력)</translation>
    </message>
    <message>
        <source>bytes the autograd graph holds in saved tensors after it</source>
        <translation>이 문장 뒤 autograd 계산 그래프가 저장된 텐서로 붙잡고 있는 바이트</translation>
    </message>
    <message>
        <source>bytes of all tensors bound to variables after it</source>
        <translation>이 문장 뒤 변수에 묶인 모든 텐서의 바이트</translation>
    </message>
    <message>
        <source>torch.cuda.memory_allocated() after it</source>
        <translation>이 문장 뒤 torch.cuda.memory_allocated()</translation>
    </message>
    <message>
        <source>torch.cuda.max_memory_allocated() after it</source>
        <translation>이 문장 뒤 torch.cuda.max_memory_allocated()</translation>
    </message>
    <message>
        <source>Memory</source>
        <extracomment>what the table shows now (the same figures again redraw nothing) the statement column&apos;s narrowest (its text is elided, the tooltip has it whole), and what it gets before the plot gets any room the plot folds away when the table would get less than it needs</extracomment>
        <translation>메모리</translation>
    </message>
    <message>
        <source>Memory table</source>
        <translation>메모리 표</translation>
    </message>
    <message>
        <source>Memory plot</source>
        <translation>메모리 차트</translation>
    </message>
    <message>
        <source>allocated bytes per statement show here</source>
        <translation>문장별 할당 바이트가 여기에 나옵니다</translation>
    </message>
    <message>
        <source>Memory table and plot</source>
        <translation>메모리 표와 차트</translation>
    </message>
    <message>
        <source>statement</source>
        <translation>문장</translation>
    </message>
    <message>
        <source>allocated</source>
        <translation>할당</translation>
    </message>
    <message>
        <source>held by graph</source>
        <translation>그래프가 보유</translation>
    </message>
    <message>
        <source>live tensors</source>
        <translation>살아 있는 텐서</translation>
    </message>
    <message>
        <source>cuda allocated</source>
        <translation>cuda 할당</translation>
    </message>
    <message>
        <source>cuda peak</source>
        <translation>cuda 최대</translation>
    </message>
    <message>
        <source>line {line}</source>
        <translation>{line}번 줄</translation>
    </message>
    <message>
        <source>total / now</source>
        <translation>합계 / 현재</translation>
    </message>
    <message>
        <source>snapshot (now)</source>
        <translation>스냅숏 (현재)</translation>
    </message>
    <message>
        <source>sum over statements</source>
        <translation>모든 문장의 합</translation>
    </message>
    <message>
        <source>now</source>
        <translation>현재</translation>
    </message>
    <message>
        <source>live</source>
        <translation>살아 있음</translation>
    </message>
    <message>
        <source>bytes per statement</source>
        <translation>문장별 바이트</translation>
    </message>
    <message>
        <source>Modules</source>
        <translation>모듈</translation>
    </message>
    <message>
        <source>Tick a module (or double-click it) to collapse its nodes into one box. Module names come from gradviz.record(model).</source>
        <translation>모듈을 체크하거나 더블클릭하면 그 노드들을 상자 하나로 접습니다. 모듈 이름은 gradviz.record(model)에서 옵니다.</translation>
    </message>
    <message>
        <source>Modules hint</source>
        <translation>모듈 도움말</translation>
    </message>
    <message>
        <source>Module tree</source>
        <translation>모듈 트리</translation>
    </message>
    <message>
        <source>Collapse linear chains</source>
        <translation>일렬 연산 접기</translation>
    </message>
    <message>
        <source>Draw each run of three or more one-to-one ops as one box</source>
        <translation>일대일로 이어진 연산이 셋 이상이면 상자 하나로 그립니다</translation>
    </message>
    <message>
        <source>Collapse all</source>
        <translation>모두 접기</translation>
    </message>
    <message>
        <source>Collapse all modules</source>
        <translation>모든 모듈 접기</translation>
    </message>
    <message>
        <source>Collapse the top-level blocks (layers.0, layers.1, …) into one box each</source>
        <translation>최상위 블록(layers.0, layers.1, …)을 각각 상자 하나로 접습니다</translation>
    </message>
    <message>
        <source>Expand all</source>
        <translation>모두 펼치기</translation>
    </message>
    <message>
        <source>Expand all modules</source>
        <translation>모든 모듈 펼치기</translation>
    </message>
    <message>
        <source>{module} (inside collapsed {group})</source>
        <translation>{module} (접힌 {group} 안)</translation>
    </message>
    <message>
        <source>Tick a module (or double-click it) to collapse its nodes into one box.</source>
        <translation>모듈을 체크하거나 더블클릭하면 그 노드들을 상자 하나로 접습니다.</translation>
    </message>
    <message>
        <source>No modules in this graph yet. Nodes built by an nn.Module the script calls (or one recorded with gradviz.record(model)) are tagged with its name and can be collapsed here.</source>
        <translation>이 그래프에는 아직 모듈이 없습니다. 스크립트가 호출한 nn.Module(또는 gradviz.record(model)로 기록한 모듈)이 만든 노드에는 모듈 이름이 붙고, 여기서 접을 수 있습니다.</translation>
    </message>
    <message>
        <source>grad_fn: a backward op recorded by the forward pass</source>
        <translation>grad_fn: 순전파가 기록한 역전파 연산</translation>
    </message>
    <message>
        <source>AccumulateGrad: adds the incoming gradient into a leaf&apos;s .grad</source>
        <translation>AccumulateGrad: 들어온 기울기를 리프 텐서의 .grad에 더합니다</translation>
    </message>
    <message>
        <source>tensor bound to a variable</source>
        <translation>변수에 묶인 텐서</translation>
    </message>
    <message>
        <source>saved tensor: kept by a grad_fn for its backward formula</source>
        <translation>저장된 텐서: grad_fn이 역전파 공식에 쓰려고 보관한 텐서</translation>
    </message>
    <message>
        <source>collapsed group: one box for many nodes (double-click it to expand)</source>
        <translation>접힌 묶음: 여러 노드를 상자 하나로 (더블클릭하면 펼칩니다)</translation>
    </message>
    <message>
        <source>variables</source>
        <extracomment>the inspector&apos;s row names a learner reads in their language (PyTorch&apos;s attribute names, requires_grad, is_leaf, grad_fn, dtype…, stay as PyTorch spells them)</extracomment>
        <translation>변수</translation>
    </message>
    <message>
        <source>stale</source>
        <translation>버전 불일치</translation>
    </message>
    <message>
        <source>created by</source>
        <translation>만든 곳</translation>
    </message>
    <message>
        <source>of which</source>
        <translation>구성</translation>
    </message>
    <message>
        <source>tensors</source>
        <translation>텐서</translation>
    </message>
    <message>
        <source>grad in</source>
        <translation>받은 기울기</translation>
    </message>
    <message>
        <source>passes on</source>
        <translation>전달</translation>
    </message>
    <message>
        <source>adds into</source>
        <translation>더하는 곳</translation>
    </message>
    <message>
        <source>Inspector</source>
        <translation>노드 정보</translation>
    </message>
    <message>
        <source>Inspector: the selected node</source>
        <translation>노드 정보: 선택한 노드</translation>
    </message>
    <message>
        <source>Click a node on the graph to see its op, saved tensors, the gradients it received and passed on, and the chain rule that produced them. Double-click a node to find its statement.</source>
        <extracomment>the backward pass being stepped on the canvas (preferred over the latest one) group nodes drawn on the canvas (collapsed modules and chains) -&gt; their attributes the search text, so a group can say which of its members match grad_fn id -&gt; its saved tensors as last seen alive (a replayed pass shows the values it used after backward freed them); forgotten when the script changes</extracomment>
        <translation>그래프에서 노드를 클릭하면 연산, 저장된 텐서, 받고 전달한 기울기, 그 기울기를 만든 연쇄 법칙을 볼 수 있습니다. 노드를 더블클릭하면 그 노드를 만든 문장을 찾아갑니다.</translation>
    </message>
    <message>
        <source>modified in place after it was saved: its version is {version}, the saved one was {expected}; backward through this node fails</source>
        <translation>저장된 뒤 제자리 연산으로 바뀌었습니다: 지금 버전은 {version}, 저장할 때 버전은 {expected}입니다. 이 노드를 지나는 역전파는 실패합니다</translation>
    </message>
    <message>
        <source>line {line}: {source}</source>
        <translation>{line}번 줄: {source}</translation>
    </message>
    <message>
        <source>Saved tensors</source>
        <translation>저장된 텐서</translation>
    </message>
    <message>
        <source>as backward pass #{n} used them (freed after it, since it ran without retain_graph=True)</source>
        <translation>역전파 #{n}이(가) 사용한 값 (retain_graph=True 없이 실행해 그 뒤에 해제됨)</translation>
    </message>
    <message>
        <source>freed: backward() ran without retain_graph=True, so this node&apos;s saved tensors are gone (a second backward fails)</source>
        <translation>해제됨: backward()를 retain_graph=True 없이 실행해서 이 노드의 저장된 텐서가 사라졌습니다 (두 번째 backward는 실패합니다)</translation>
    </message>
    <message>
        <source>none</source>
        <translation>없음</translation>
    </message>
    <message>
        <source>Saved values</source>
        <translation>저장된 값</translation>
    </message>
    <message>
        <source> — same memory as {names}</source>
        <translation> — {names}와(과) 같은 메모리</translation>
    </message>
    <message>
        <source> — STALE (version {version}, saved at version {expected})</source>
        <translation> — 버전 불일치 (지금 버전 {version}, 저장할 때 버전 {expected})</translation>
    </message>
    <message>
        <source>collapsed linear chain of ops</source>
        <translation>접힌 일렬 연산</translation>
    </message>
    <message>
        <source>collapsed module {name}</source>
        <translation>접힌 모듈 {name}</translation>
    </message>
    <message>
        <source>, … ({n} in all)</source>
        <translation>, … (모두 {n}개)</translation>
    </message>
    <message>
        <source>Ops inside</source>
        <translation>안에 든 연산</translation>
    </message>
    <message>
        <source>… and {n} more kinds of op</source>
        <translation>… 그 밖에 연산 {n}종류</translation>
    </message>
    <message>
        <source>Matches for &apos;{text}&apos;</source>
        <translation>&apos;{text}&apos; 검색 결과</translation>
    </message>
    <message>
        <source>Double-click the box (or right-click › Expand) to show these nodes.</source>
        <translation>상자를 더블클릭하면(또는 오른쪽 클릭 › 펼치기) 이 노드들이 보입니다.</translation>
    </message>
    <message>
        <source>Backward</source>
        <translation>역전파</translation>
    </message>
    <message>
        <source>not run by any backward pass yet</source>
        <translation>아직 어떤 역전파도 이 노드를 실행하지 않았습니다</translation>
    </message>
    <message>
        <source>iteration {n}</source>
        <translation>{n}번째 반복</translation>
    </message>
    <message>
        <source>Backward pass #{n}</source>
        <translation>역전파 #{n}</translation>
    </message>
    <message>
        <source> and </source>
        <extracomment>row tints are translucent, so they read over a light and a dark base alike the name of a local variable of the paused frame a cell&apos;s text needs this much more than its advance: the item style&apos;s padding (4 px a side), the view&apos;s text margins (3 px a side) and 2 px of air</extracomment>
        <translation> 및 </translation>
    </message>
    <message>
        <source>Chain rule</source>
        <translation>연쇄 법칙</translation>
    </message>
    <message>
        <source>Output</source>
        <extracomment>the statement (index) that wrote it; None for the window&apos;s notes under this width the line number goes inline rather than in its own column</extracomment>
        <translation>출력</translation>
    </message>
    <message>
        <source>Output: print output, values, warnings and errors</source>
        <translation>출력: print 출력, 값, 경고, 오류</translation>
    </message>
    <message>
        <source>Nothing ran: fix the script and press Step again.</source>
        <extracomment>streamed print output of the running statement (add_live) the entry to scroll to after the next render (None: the end) characters of streamed output the panel shows before the statement&apos;s result</extracomment>
        <translation>아무것도 실행되지 않았습니다: 스크립트를 고친 뒤 다시 한 단계를 누르세요.</translation>
    </message>
    <message>
        <source>Why: {why}</source>
        <translation>이유: {why}</translation>
    </message>
    <message>
        <source>warning</source>
        <translation>경고</translation>
    </message>
    <message>
        <source>error</source>
        <translation>오류</translation>
    </message>
    <message>
        <source>print() output, expression values, warnings and errors appear here, each with its line number.</source>
        <translation>print() 출력, 식의 값, 경고와 오류가 줄 번호와 함께 여기에 나옵니다.</translation>
    </message>
</context>
<context>
    <name>Passes</name>
    <message>
        <source>line {line}</source>
        <translation>{line}번 줄</translation>
    </message>
    <message>
        <source>iteration {n}</source>
        <translation>{n}번째 반복</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>실패</translation>
    </message>
    <message>
        <source>Backward passes</source>
        <translation>역전파 기록</translation>
    </message>
    <message>
        <source>Backward passes list</source>
        <translation>역전파 기록 목록</translation>
    </message>
    <message>
        <source>One row per backward() call; pick one to replay it on the graph</source>
        <translation>backward() 호출마다 한 행입니다. 하나를 고르면 그래프에서 재생합니다</translation>
    </message>
    <message>
        <source>No backward pass yet: each backward() call is listed here.</source>
        <translation>아직 역전파가 없습니다: backward()를 호출할 때마다 여기에 나옵니다.</translation>
    </message>
    <message>
        <source>Backward passes hint</source>
        <translation>역전파 기록 도움말</translation>
    </message>
    <message>
        <source>Gradients right after the picked pass</source>
        <translation>고른 역전파 직후의 기울기</translation>
    </message>
    <message>
        <source>{steps} engine steps over {nodes} nodes; click to replay this pass (F7 steps it)</source>
        <translation>노드 {nodes}개에 걸친 엔진 단계 {steps}개. 클릭하면 이 역전파를 재생합니다 (F7로 한 단계씩)</translation>
    </message>
    <message>
        <source>.grad right after this pass:</source>
        <translation>이 역전파 직후의 .grad:</translation>
    </message>
</context>
<context>
    <name>Stepper</name>
    <message>
        <source>This is a read-only snapshot: open a script (Ctrl+O) to step</source>
        <extracomment>how long Stop waits for the kernel to end a statement gently before killing it Stop is enabled this long after a request starts (a quick step never flashes it) intents that run from the statement at the cursor (the status names its line)</extracomment>
        <translation>읽기 전용 스냅숏입니다: 한 단계씩 실행하려면 스크립트를 여세요 (Ctrl+O)</translation>
    </message>
    <message>
        <source>{message}: running on cpu instead</source>
        <extracomment>what the last replay repeated outside the script (trusted), to say after it every step the user took, with the state it left (see gradviz.app.timeline) the timeline step shown when it is a past one (None: the kernel&apos;s present) replies still to come that a timeline replay asked for (not new steps) a statement the user or the time limit stopped: index, line, seconds, message why the window skips a statement Stop or the watchdog killed (said once)</extracomment>
        <translation>{message}: 대신 cpu에서 실행합니다</translation>
    </message>
    <message>
        <source>the kernel refused</source>
        <translation>커널이 거부했습니다</translation>
    </message>
    <message>
        <source>Loading the script…</source>
        <translation>스크립트를 불러오는 중…</translation>
    </message>
    <message>
        <source>{message}

Nothing ran and the state is unchanged: fix this line and press Step again.</source>
        <translation>{message}

아무것도 실행되지 않았고 상태도 그대로입니다: 이 줄을 고친 뒤 한 단계를 다시 누르세요.</translation>
    </message>
    <message>
        <source>{message} (nothing ran; the state is kept)</source>
        <translation>{message} (아무것도 실행되지 않았고, 상태는 그대로입니다)</translation>
    </message>
    <message>
        <source>Line {line}: {message}. Nothing ran; the state is kept.</source>
        <translation>{line}번 줄: {message}. 아무것도 실행되지 않았고, 상태는 그대로입니다.</translation>
    </message>
    <message>
        <source>Running the next statement…</source>
        <translation>다음 문장을 실행하는 중…</translation>
    </message>
    <message>
        <source>Stepping into…</source>
        <translation>안으로 들어가는 중…</translation>
    </message>
    <message>
        <source>Step out works inside a paused loop or call: Step into (F11) first</source>
        <translation>밖으로 나가기는 멈춘 반복문이나 호출 안에서만 됩니다: 먼저 안으로 들어가기(F11)를 누르세요</translation>
    </message>
    <message>
        <source>Stepping out…</source>
        <translation>밖으로 나가는 중…</translation>
    </message>
    <message>
        <source>The script changed: re-running it…</source>
        <translation>스크립트가 바뀌었습니다: 다시 실행하는 중…</translation>
    </message>
    <message>
        <source>it hit the time limit</source>
        <translation>제한 시간을 넘겼습니다</translation>
    </message>
    <message>
        <source>you stopped it</source>
        <translation>사용자가 중지했습니다</translation>
    </message>
    <message>
        <source>At the end of the script: nothing left to step</source>
        <translation>스크립트 끝입니다: 더 실행할 문장이 없습니다</translation>
    </message>
    <message>
        <source>Running to the next breakpoint…</source>
        <translation>다음 중단점까지 실행하는 중…</translation>
    </message>
    <message>
        <source>Running to the next backward()…</source>
        <translation>다음 backward()까지 실행하는 중…</translation>
    </message>
    <message>
        <source>Breakpoints on lines {lines}: Run (F5) stops at the next one</source>
        <translation>{lines}번 줄에 중단점: 실행(F5)하면 다음 중단점에서 멈춥니다</translation>
    </message>
    <message>
        <source>Breakpoints on line {lines}: Run (F5) stops at the next one</source>
        <translation>{lines}번 줄에 중단점: 실행(F5)하면 다음 중단점에서 멈춥니다</translation>
    </message>
    <message>
        <source>No breakpoints: Run (F5) runs to the end</source>
        <translation>중단점 없음: 실행(F5)하면 끝까지 실행합니다</translation>
    </message>
    <message>
        <source>Running to the end…</source>
        <translation>끝까지 실행하는 중…</translation>
    </message>
    <message>
        <source>Running to line {line}…</source>
        <translation>{line}번 줄까지 실행하는 중…</translation>
    </message>
    <message>
        <source>Stepping back…</source>
        <translation>한 단계 뒤로 가는 중…</translation>
    </message>
    <message>
        <source>Resetting…</source>
        <translation>처음으로 돌아가는 중…</translation>
    </message>
    <message>
        <source>Zeroing every leaf&apos;s .grad…</source>
        <translation>모든 리프 텐서의 .grad를 0으로 만드는 중…</translation>
    </message>
    <message>
        <source>Stopping the paused statement…</source>
        <translation>멈춘 문장을 중지하는 중…</translation>
    </message>
    <message>
        <source>Stopping: the statement ends at its next step and keeps its work…</source>
        <translation>중지하는 중: 문장은 다음 단계에서 끝나고, 그때까지 한 일은 남습니다…</translation>
    </message>
    <message>
        <source>line {line}</source>
        <translation>{line}번 줄</translation>
    </message>
    <message>
        <source>the statement</source>
        <translation>이 문장</translation>
    </message>
    <message>
        <source>Stopped {where} after {seconds} s. Restarting the kernel and replaying the statements before it; nothing before it is lost.</source>
        <translation>{seconds}초 뒤에 {where}을 중지했습니다. 커널을 다시 시작하고 그 앞의 문장들을 다시 실행합니다. 그 앞의 결과는 잃지 않습니다.</translation>
    </message>
    <message>
        <source>Stopped {where}: restarting the kernel and replaying…</source>
        <translation>{where}을 중지했습니다: 커널을 다시 시작하고 다시 실행하는 중…</translation>
    </message>
    <message>
        <source>{message}. Restarting the kernel and replaying the statements before it; nothing before it is lost.</source>
        <translation>{message}. 커널을 다시 시작하고 그 앞의 문장들을 다시 실행합니다. 그 앞의 결과는 잃지 않습니다.</translation>
    </message>
    <message>
        <source>Time limit: line {line} stopped; restarting the kernel and replaying…</source>
        <translation>제한 시간 초과: {line}번 줄을 중지했습니다. 커널을 다시 시작하고 다시 실행하는 중…</translation>
    </message>
    <message>
        <source>cuda is unavailable: {reason}</source>
        <translation>cuda를 쓸 수 없습니다: {reason}</translation>
    </message>
    <message>
        <source>Switching to {device} and re-running…</source>
        <translation>{device}로 바꾸고 다시 실행하는 중…</translation>
    </message>
    <message>
        <source>Switching to {device}: re-running {n} statements…</source>
        <translation>{device}로 바꾸는 중: 문장 {n}개를 다시 실행하는 중…</translation>
    </message>
    <message>
        <source>Stopped at the breakpoint on line {line} (before it runs)</source>
        <translation>{line}번 줄의 중단점에서 멈췄습니다 (그 줄을 실행하기 전)</translation>
    </message>
    <message>
        <source>Stopped before line {line}: it calls backward()</source>
        <translation>{line}번 줄 앞에서 멈췄습니다: 이 줄이 backward()를 호출합니다</translation>
    </message>
    <message>
        <source>No backward() call is left to run to</source>
        <translation>더 실행해 갈 backward() 호출이 없습니다</translation>
    </message>
    <message>
        <source>it failed</source>
        <translation>실패했습니다</translation>
    </message>
    <message>
        <source>Skipped line {line} ({why}); {status}</source>
        <translation>{line}번 줄을 건너뛰었습니다 ({why}). {status}</translation>
    </message>
    <message>
        <source>The kernel is busy: pick the step again when it is done</source>
        <translation>커널이 작업 중입니다: 끝난 뒤에 단계를 다시 고르세요</translation>
    </message>
    <message>
        <source>Back at the present: step {n} of {total}</source>
        <translation>현재로 돌아왔습니다: {total}단계 중 {n}단계</translation>
    </message>
    <message>
        <source>Showing step {n} of {total} ({tip}) from the timeline; Step or Run continues from here</source>
        <translation>타임라인의 {total}단계 중 {n}단계({tip})를 보여 줍니다. 한 단계나 실행을 누르면 여기서부터 이어집니다</translation>
    </message>
    <message>
        <source>Going back to step {n}: replaying…</source>
        <translation>{n}단계로 돌아가는 중: 다시 실행하는 중…</translation>
    </message>
    <message>
        <source>CUDA is available</source>
        <translation>CUDA를 쓸 수 있습니다</translation>
    </message>
    <message>
        <source>cuda unavailable: {reason}</source>
        <translation>cuda를 쓸 수 없음: {reason}</translation>
    </message>
    <message>
        <source>cuda is unavailable here ({reason}): using cpu</source>
        <translation>여기서는 cuda를 쓸 수 없습니다 ({reason}): cpu를 씁니다</translation>
    </message>
    <message>
        <source>Kernel ready</source>
        <translation>커널 준비됨</translation>
    </message>
    <message>
        <source>Replaying {done} of {total} statements on a fresh kernel…</source>
        <translation>새 커널에서 문장 {total}개 중 {done}개를 다시 실행하는 중…</translation>
    </message>
    <message>
        <source>Running line {line} ({n} of {total})…</source>
        <translation>{line}번 줄을 실행하는 중 ({total}개 중 {n}번째)…</translation>
    </message>
    <message>
        <source>the script</source>
        <translation>스크립트</translation>
    </message>
    <message>
        <source>Running {where} for {seconds} s… Stop (Shift+F5) ends it</source>
        <translation>{where} 실행 중, {seconds}초 지남… 중지(Shift+F5)를 누르면 끝납니다</translation>
    </message>
    <message>
        <source>The kernel died: restarting it and replaying…</source>
        <translation>커널이 죽었습니다: 다시 시작하고 다시 실행하는 중…</translation>
    </message>
    <message>
        <source>{message}. Restarting it and replaying the statements that had run.</source>
        <translation>{message}. 커널을 다시 시작하고 실행했던 문장들을 다시 실행합니다.</translation>
    </message>
    <message>
        <source>Restarted, but the replay failed: {message}</source>
        <translation>커널을 다시 시작했지만 다시 실행하지 못했습니다: {message}</translation>
    </message>
    <message>
        <source>Kernel restarted after a crash; replayed {n} statements</source>
        <translation>비정상 종료 뒤 커널을 다시 시작했습니다. 문장 {n}개를 다시 실행했습니다</translation>
    </message>
    <message>
        <source>Stopped {where}; replayed {n} statements on a fresh kernel: all state before it is kept</source>
        <translation>{where}을 중지했습니다. 새 커널에서 문장 {n}개를 다시 실행했습니다: 그 앞의 상태는 모두 남아 있습니다</translation>
    </message>
    <message>
        <source>The kernel keeps crashing; press Reset (Ctrl+R) to start it again.</source>
        <translation>커널이 계속 비정상 종료됩니다. 다시 시작하려면 처음으로(Ctrl+R)를 누르세요.</translation>
    </message>
    <message>
        <source>The kernel keeps crashing: press Reset (Ctrl+R) to start it again</source>
        <translation>커널이 계속 비정상 종료됩니다: 다시 시작하려면 처음으로(Ctrl+R)를 누르세요</translation>
    </message>
</context>
<context>
    <name>Timeline</name>
    <message>
        <source>Timeline</source>
        <translation>타임라인</translation>
    </message>
    <message>
        <source> (not kept: replays)</source>
        <translation> (보관 안 됨: 다시 실행)</translation>
    </message>
    <message>
        <source>line {line}</source>
        <extracomment>the kernel&apos;s state after the step (None once dropped to cap memory) top-level statements run when the step&apos;s statement started (its cursor) debug requests sent since that statement started ((mode, breakpoints) each); empty when the step ended at the top level</extracomment>
        <translation>{line}번 줄</translation>
    </message>
    <message>
        <source>paused before line {line}</source>
        <translation>{line}번 줄 앞에서 멈춤</translation>
    </message>
    <message>
        <source> · it {n}</source>
        <translation> · 반복 {n}</translation>
    </message>
    <message>
        <source>, iteration {n} of {total}</source>
        <translation>, {total}번 중 {n}번째 반복</translation>
    </message>
    <message>
        <source>, iteration {n}</source>
        <translation>, {n}번째 반복</translation>
    </message>
    <message>
        <source>, in {frame}</source>
        <translation>, {frame} 안</translation>
    </message>
    <message>
        <source>line {line} stopped: {message}</source>
        <translation>{line}번 줄 중지됨: {message}</translation>
    </message>
    <message>
        <source>line {line} failed: {message}</source>
        <translation>{line}번 줄 실패: {message}</translation>
    </message>
    <message>
        <source>✕ line {line}</source>
        <translation>✕ {line}번 줄</translation>
    </message>
    <message>
        <source>ran {line}</source>
        <translation>{line}번 줄 실행</translation>
    </message>
    <message>
        <source>ran line {line}; {n} statements run</source>
        <translation>{line}번 줄을 실행했습니다. 지금까지 문장 {n}개 실행</translation>
    </message>
    <message>
        <source>ran {first}–{last}</source>
        <translation>{first}–{last}번 줄 실행</translation>
    </message>
    <message>
        <source>ran lines {first}–{last}; {n} statements run</source>
        <translation>{first}–{last}번 줄을 실행했습니다. 지금까지 문장 {n}개 실행</translation>
    </message>
    <message>
        <source>start</source>
        <translation>시작</translation>
    </message>
    <message>
        <source>nothing has run yet</source>
        <translation>아직 아무것도 실행하지 않았습니다</translation>
    </message>
    <message>
        <source>1 statement run</source>
        <translation>문장 1개 실행됨</translation>
    </message>
    <message>
        <source>before line {line}</source>
        <translation>{line}번 줄 앞</translation>
    </message>
    <message>
        <source>{run}; line {line} runs next</source>
        <translation>{run}. 다음은 {line}번 줄</translation>
    </message>
    <message>
        <source>after 1 statement</source>
        <translation>문장 1개 실행 뒤</translation>
    </message>
    <message>
        <source>after {n} statements</source>
        <translation>문장 {n}개 실행 뒤</translation>
    </message>
    <message>
        <source>{n} statements run</source>
        <translation>문장 {n}개 실행됨</translation>
    </message>
</context>
<context>
    <name>Trust</name>
    <message>
        <source>Trusted</source>
        <extracomment>what the window&apos;s banner and badge say, in VS Code&apos;s words where they fit (English: the keys of their translations, context ``Trust``; the window shows translate(...))
----------
the mode badge&apos;s words as gradviz.app.trust writes them (BADGE_TEXT, BADGE_TIP): the keys the window translates them by (tests/test_i18n.py checks each has its entry)</extracomment>
        <translation>신뢰함</translation>
    </message>
    <message>
        <source>Restricted mode</source>
        <extracomment>the user trusts the authors of the scripts in the banner&apos;s folder the user keeps the script restricted (the banner goes; the folder stays untrusted)</extracomment>
        <translation>제한 모드</translation>
    </message>
    <message>
        <source>This script runs as Python, as python would run it: imports, files, the GPU. Scripts you write, the demos and folders you trusted run this way.</source>
        <translation>이 스크립트는 python이 실행하듯 Python으로 실행됩니다: import, 파일, GPU 모두 쓸 수 있습니다. 직접 쓴 스크립트, 데모, 신뢰한 폴더의 스크립트가 이렇게 실행됩니다.</translation>
    </message>
    <message>
        <source>This script runs in restricted mode: gradviz&apos;s interpreter in a confined process, with no files, network or programs, and only what the allowlist admits. For scripts from someone else.</source>
        <translation>이 스크립트는 제한 모드로 실행됩니다: gradviz의 인터프리터가 격리된 프로세스에서 실행하며, 파일, 네트워크, 다른 프로그램은 쓸 수 없고 허용 목록에 있는 것만 실행됩니다. 다른 사람이 만든 스크립트에 씁니다.</translation>
    </message>
    <message>
        <source>Trust folder</source>
        <translation>폴더 신뢰</translation>
    </message>
    <message>
        <source>Run the scripts of this folder as Python from now on (remembered)</source>
        <translation>이제부터 이 폴더의 스크립트를 Python으로 실행합니다 (기억됨)</translation>
    </message>
    <message>
        <source>Keep restricted</source>
        <translation>제한 유지</translation>
    </message>
    <message>
        <source>Keep this script in gradviz&apos;s sandbox</source>
        <translation>이 스크립트를 gradviz의 샌드박스 안에서 실행합니다</translation>
    </message>
    <message>
        <source>Restricted mode: scripts in &apos;{folder}&apos; may come from someone else, so this one runs in gradviz&apos;s sandbox. Trust the authors of this folder&apos;s scripts?</source>
        <translation>제한 모드: &apos;{folder}&apos;의 스크립트는 다른 사람이 만든 것일 수 있어서 gradviz의 샌드박스에서 실행합니다. 이 폴더 스크립트의 작성자를 신뢰합니까?</translation>
    </message>
    <message>
        <source>In restricted mode gradviz&apos;s interpreter runs the script in a confined process: no files, network or programs, and only the Python its allowlist admits. Trust folder runs the scripts of this folder as Python from now on (remembered).</source>
        <translation>제한 모드에서는 gradviz의 인터프리터가 격리된 프로세스에서 스크립트를 실행합니다: 파일, 네트워크, 다른 프로그램을 쓸 수 없고 허용 목록에 있는 Python만 실행됩니다. 폴더 신뢰를 누르면 이제부터 이 폴더의 스크립트를 Python으로 실행합니다 (기억됨).</translation>
    </message>
</context>
<context>
    <name>Window</name>
    <message>
        <source>Script editor</source>
        <extracomment>the version of the saved dock layout (a layout saved by another version is not restored)</extracomment>
        <translation>스크립트 편집기</translation>
    </message>
    <message>
        <source>Autograd graph</source>
        <translation>autograd 계산 그래프</translation>
    </message>
    <message>
        <source>Debugger position</source>
        <translation>디버거 위치</translation>
    </message>
    <message>
        <source>Timeline of steps</source>
        <translation>단계 타임라인</translation>
    </message>
    <message>
        <source>File name</source>
        <translation>파일 이름</translation>
    </message>
    <message>
        <source>Inspector</source>
        <translation>노드 정보</translation>
    </message>
    <message>
        <source>Gradient accumulation</source>
        <translation>기울기 누적</translation>
    </message>
    <message>
        <source>Tensors</source>
        <translation>텐서</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>메모리</translation>
    </message>
    <message>
        <source>Output</source>
        <translation>출력</translation>
    </message>
    <message>
        <source>Modules</source>
        <translation>모듈</translation>
    </message>
    <message>
        <source>Backward passes</source>
        <translation>역전파 기록</translation>
    </message>
    <message>
        <source>Starting the kernel…</source>
        <translation>커널을 시작하는 중…</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>상태</translation>
    </message>
    <message>
        <source>Progress</source>
        <translation>진행</translation>
    </message>
    <message>
        <source>Position in the script</source>
        <translation>스크립트 안의 위치</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>장치</translation>
    </message>
    <message>
        <source>Layout progress</source>
        <translation>배치 진행</translation>
    </message>
</context>
</TS>
