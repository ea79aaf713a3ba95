<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="ko" sourcelanguage="en">
    <context>
        <name>Demos</name>
        <message>
            <source>Devices</source>
            <translation>장치</translation>
        </message>
        <message>
            <source>A tensor lives on one device; operations need their inputs on the same one, and .to() makes a copy.</source>
            <translation>텐서는 한 장치에 놓입니다. 연산의 입력은 모두 같은 장치에 있어야 하고, .to()는 복사본을 만듭니다.</translation>
        </message>
        <message>
            <source>`dev` is the device picked in the toolbar. On cuda, `a` lives on the GPU and `b` on the cpu.</source>
            <translation>`dev`는 도구 모음에서 고른 장치입니다. cuda를 고르면 `a`는 GPU에, `b`는 cpu에 놓입니다.</translation>
        </message>
        <message>
            <source>On cuda this fails: "Expected all tensors to be on the same device". On cpu both agree.</source>
            <translation>cuda에서는 이 줄이 실패합니다: "Expected all tensors to be on the same device". cpu에서는 둘이 같은 장치라 문제없습니다.</translation>
        </message>
        <message>
            <source>.to() returns a NEW tensor on cuda; b itself stays where it was. On cpu nothing moves, so .to() returns b itself: b_moved IS b (one node, both names).</source>
            <translation>.to()는 cuda 위에 새 텐서를 돌려줍니다. b 자신은 원래 자리에 그대로 있습니다. cpu에서는 옮길 것이 없어서 .to()가 b 자신을 돌려줍니다: b_moved가 곧 b입니다 (노드 하나에 이름 둘).</translation>
        </message>
        <message>
            <source>numpy() refuses a tensor that requires grad: NumPy cannot track gradients.</source>
            <translation>numpy()는 requires_grad인 텐서를 거부합니다: NumPy는 기울기를 추적할 수 없기 때문입니다.</translation>
        </message>
        <message>
            <source>Detach it from the graph (and copy it to the cpu) first.</source>
            <translation>먼저 계산 그래프에서 떼어 내고(detach) cpu로 복사하세요.</translation>
        </message>
        <message>
            <source>requires_grad, retain_grad and a first backward</source>
            <translation>requires_grad, retain_grad와 첫 backward</translation>
        </message>
        <message>
            <source>z = mean((w**3) + 3): step forward to grow the graph, then backward to send dz/dw = 3w**2/4 into w.grad.</source>
            <translation>z = mean((w**3) + 3): 한 단계씩 실행해 계산 그래프를 키운 다음, 역전파로 dz/dw = 3w**2/4를 w.grad에 보냅니다.</translation>
        </message>
        <message>
            <source>PowBackward0 appears: it saved w to compute 3*w**2 later.</source>
            <translation>PowBackward0이 나타납니다: 나중에 3*w**2를 계산하려고 w를 저장해 두었습니다.</translation>
        </message>
        <message>
            <source>x is not a leaf: without retain_grad its .grad is None and PyTorch warns.</source>
            <translation>x는 리프 텐서가 아닙니다: retain_grad가 없으면 .grad는 None이고 PyTorch가 경고합니다.</translation>
        </message>
        <message>
            <source>Watch the gradient flow: MeanBackward0 -&gt; AddBackward0 -&gt; PowBackward0 -&gt; AccumulateGrad -&gt; w.</source>
            <translation>기울기가 흐르는 길을 보세요: MeanBackward0 -&gt; AddBackward0 -&gt; PowBackward0 -&gt; AccumulateGrad -&gt; w.</translation>
        </message>
        <message>
            <source>The same lines under no_grad: no grad_fn, no graph.</source>
            <translation>no_grad 안에서 같은 코드를 실행하면: grad_fn도, 계산 그래프도 없습니다.</translation>
        </message>
        <message>
            <source>Nothing to backward through: PyTorch refuses.</source>
            <translation>역전파할 그래프가 없으니 PyTorch가 거부합니다.</translation>
        </message>
        <message>
            <source>retain_graph and accumulation</source>
            <translation>retain_graph와 기울기 누적</translation>
        </message>
        <message>
            <source>backward() adds into .grad; the graph's saved tensors are freed after a backward unless retain_graph=True.</source>
            <translation>backward()는 .grad에 더합니다. retain_graph=True가 아니면 역전파가 끝난 뒤 계산 그래프의 저장된 텐서가 해제됩니다.</translation>
        </message>
        <message>
            <source>dz/dx = 3/x = 0.6. retain_graph keeps PowBackward0's saved x for another pass.</source>
            <translation>dz/dx = 3/x = 0.6. retain_graph는 PowBackward0이 저장한 x를 다음 역전파를 위해 남겨 둡니다.</translation>
        </message>
        <message>
            <source>The second pass ADDS 0.6 to x.grad: the accumulation panel shows 0.6, 1.2. The graph is then freed.</source>
            <translation>두 번째 역전파는 x.grad에 0.6을 더합니다: 기울기 누적 패널에 0.6, 1.2가 나옵니다. 그다음 계산 그래프가 해제됩니다.</translation>
        </message>
        <message>
            <source>The saved tensors are gone: PyTorch refuses a third pass.</source>
            <translation>저장된 텐서가 사라졌습니다: PyTorch가 세 번째 역전파를 거부합니다.</translation>
        </message>
        <message>
            <source>Reset the accumulation (the Zero-grad button does the same).</source>
            <translation>누적된 기울기를 초기화합니다 (기울기 0으로 버튼도 같은 일을 합니다).</translation>
        </message>
        <message>
            <source>Two paths into one leaf (a stem)</source>
            <translation>한 리프 텐서로 들어가는 두 경로</translation>
        </message>
        <message>
            <source>x reaches z along two paths; autograd sums both contributions into x.grad: 0.008*75 + 0.1*10 = 1.6.</source>
            <translation>x는 두 경로로 z에 닿습니다. autograd는 두 경로의 기여를 더해 x.grad에 넣습니다: 0.008*75 + 0.1*10 = 1.6.</translation>
        </message>
        <message>
            <source>AddBackward0 at the root joins the two paths.</source>
            <translation>루트의 AddBackward0이 두 경로를 합칩니다.</translation>
        </message>
        <message>
            <source>Step the backward pass: both PowBackward0 nodes send a gradient into x's AccumulateGrad.</source>
            <translation>역전파를 한 단계씩 따라가 보세요: 두 PowBackward0 노드가 모두 x의 AccumulateGrad로 기울기를 보냅니다.</translation>
        </message>
        <message>
            <source>Two leaves</source>
            <translation>리프 텐서 두 개</translation>
        </message>
        <message>
            <source>With a tensor exponent, x ** q becomes PowBackward1, which sends gradients to both x and q.</source>
            <translation>지수가 텐서이면 x ** q는 PowBackward1이 되고, x와 q 모두에 기울기를 보냅니다.</translation>
        </message>
        <message>
            <source>PowBackward1 (tensor exponent), not PowBackward0: it has two inputs.</source>
            <translation>PowBackward0이 아니라 PowBackward1(지수가 텐서)입니다: 입력이 둘입니다.</translation>
        </message>
        <message>
            <source>q.grad = 0.008 * 125 * ln 5 = 1.6094; x.grad = 0.6.</source>
            <translation>q.grad = 0.008 * 125 * ln 5 = 1.6094이고 x.grad = 0.6입니다.</translation>
        </message>
        <message>
            <source>A custom autograd.Function</source>
            <translation>직접 만든 autograd.Function</translation>
        </message>
        <message>
            <source>MyPow writes its own forward and backward; its node MyPowBackward runs your backward during the pass.</source>
            <translation>MyPow는 forward와 backward를 직접 정의합니다. 역전파 중에는 그 노드 MyPowBackward가 여러분이 쓴 backward를 실행합니다.</translation>
        </message>
        <message>
            <source>MyPowBackward saved both inputs (5 and 3): see them on the canvas and in the inspector.</source>
            <translation>MyPowBackward는 두 입력(5와 3)을 저장했습니다: 그래프와 노드 정보 패널에서 확인하세요.</translation>
        </message>
        <message>
            <source>MyPowBackward receives grad_output = 0.008 and returns 0.6 (for x) and 1.6094 (for q).</source>
            <translation>MyPowBackward는 grad_output = 0.008을 받아 0.6(x 몫)과 1.6094(q 몫)를 돌려줍니다.</translation>
        </message>
        <message>
            <source>no_grad and memory</source>
            <translation>no_grad와 메모리</translation>
        </message>
        <message>
            <source>Outside no_grad the graph keeps tensors alive for backward; inside it nothing is recorded or saved.</source>
            <translation>no_grad 밖에서는 계산 그래프가 역전파에 쓸 텐서를 붙잡아 둡니다. 안에서는 아무것도 기록하거나 저장하지 않습니다.</translation>
        </message>
        <message>
            <source>ExpBackward0 saves its result (4,000,000 bytes): the memory panel shows the graph holding it.</source>
            <translation>ExpBackward0은 결과(4,000,000바이트)를 저장합니다: 메모리 패널에서 계산 그래프가 이를 붙잡고 있는 것을 볼 수 있습니다.</translation>
        </message>
        <message>
            <source>Dropping the names drops the graph and what it saved.</source>
            <translation>이름을 지우면 계산 그래프와 그 그래프가 저장한 것도 사라집니다.</translation>
        </message>
        <message>
            <source>The same lines under no_grad: no grad_fn, no saved tensors, the graph holds 0 bytes.</source>
            <translation>no_grad 안에서 같은 코드를 실행하면: grad_fn도, 저장된 텐서도 없고 그래프가 붙잡은 메모리는 0바이트입니다.</translation>
        </message>
        <message>
            <source>In-place versus out-of-place memory</source>
            <translation>제자리 연산과 새 텐서를 만드는 연산의 메모리</translation>
        </message>
        <message>
            <source>torch.relu(t) allocates a new 400,000,000-byte tensor; torch.relu_(t) writes into t and allocates nothing.</source>
            <translation>torch.relu(t)는 400,000,000바이트짜리 새 텐서를 할당하고, torch.relu_(t)는 t에 바로 써서 아무것도 할당하지 않습니다.</translation>
        </message>
        <message>
            <source>Out of place: a new 10000x10000 float32 tensor, 400,000,000 bytes (381.5 MiB).</source>
            <translation>새 텐서를 만드는 연산: 10000x10000 float32 텐서, 400,000,000바이트(381.5 MiB).</translation>
        </message>
        <message>
            <source>In place: relu_ overwrites t, 0 bytes allocated (and t's version counter goes up).</source>
            <translation>제자리 연산: relu_가 t를 덮어써서 할당은 0바이트입니다 (t의 버전 카운터는 올라갑니다).</translation>
        </message>
        <message>
            <source>In-place dangers</source>
            <translation>제자리 연산의 위험</translation>
        </message>
        <message>
            <source>In-place changes to a leaf, or to a tensor a backward node saved, break gradient computation.</source>
            <translation>리프 텐서나 역전파 노드가 저장한 텐서를 제자리 연산으로 바꾸면 기울기 계산이 깨집니다.</translation>
        </message>
        <message>
            <source>A leaf that requires grad cannot be changed in place.</source>
            <translation>requires_grad인 리프 텐서는 제자리 연산으로 바꿀 수 없습니다.</translation>
        </message>
        <message>
            <source>SigmoidBackward0 saved its result b (version 0). mul_ changes b in place: its version becomes 1.</source>
            <translation>SigmoidBackward0은 결과 b(버전 0)를 저장했습니다. mul_이 b를 제자리에서 바꾸므로 버전이 1이 됩니다.</translation>
        </message>
        <message>
            <source>The saved b is stale (version 1, expected 0): backward refuses.</source>
            <translation>저장된 b의 버전이 맞지 않습니다 (버전 1, 기대한 버전 0): backward가 거부합니다.</translation>
        </message>
        <message>
            <source>The out-of-place version keeps the saved tensor intact.</source>
            <translation>새 텐서를 만드는 쪽은 저장된 텐서를 그대로 둡니다.</translation>
        </message>
        <message>
            <source>Shared storage: views, detach, numpy</source>
            <translation>공유 스토리지: view, detach, numpy</translation>
        </message>
        <message>
            <source>Some operations share memory with their input (views, detach, from_numpy); clone copies.</source>
            <translation>어떤 연산은 입력과 메모리를 공유합니다 (view, detach, from_numpy). clone은 복사합니다.</translation>
        </message>
        <message>
            <source>from_numpy shares a's memory: changing b changes a.</source>
            <translation>from_numpy는 a의 메모리를 공유합니다: b를 바꾸면 a도 바뀝니다.</translation>
        </message>
        <message>
            <source>y + x makes a new tensor: y_before keeps the old one.</source>
            <translation>y + x는 새 텐서를 만듭니다: y_before는 예전 텐서를 그대로 가리킵니다.</translation>
        </message>
        <message>
            <source>These write into y's memory (y_before stays apart from the new y).</source>
            <translation>이 줄들은 y의 메모리에 씁니다 (y_before는 새 y와 따로 남습니다).</translation>
        </message>
        <message>
            <source>view, [:], detach and numpy share x's storage (same storage group); clone does not.</source>
            <translation>view, [:], detach, numpy는 x의 스토리지를 공유하고(같은 스토리지 그룹), clone은 공유하지 않습니다.</translation>
        </message>
        <message>
            <source>index_select, masked_select and gather return copies.</source>
            <translation>index_select, masked_select, gather는 복사본을 돌려줍니다.</translation>
        </message>
        <message>
            <source>B shares A's memory: writing B[0] visibly changes A.</source>
            <translation>B는 A의 메모리를 공유합니다: B[0]에 쓰면 A가 바뀌는 것이 보입니다.</translation>
        </message>
        <message>
            <source>clone versus detach</source>
            <translation>clone과 detach</translation>
        </message>
        <message>
            <source>clone() copies and stays in the graph (CloneBackward0); detach() shares memory and leaves the graph.</source>
            <translation>clone()은 복사하고 계산 그래프에 남습니다 (CloneBackward0). detach()는 메모리를 공유하고 계산 그래프에서 빠집니다.</translation>
        </message>
        <message>
            <source>a.data changes a without autograd noticing; c shares a's memory, so c = 3 too.</source>
            <translation>a.data는 autograd 모르게 a를 바꿉니다. c는 a의 메모리를 공유하므로 c도 3이 됩니다.</translation>
        </message>
        <message>
            <source>Gradient through a clone.</source>
            <translation>clone을 거쳐 흐르는 기울기.</translation>
        </message>
        <message>
            <source>a_ is not a leaf: its .grad stays None. a.grad accumulates 2, then 2 + 3 = 5 more.</source>
            <translation>a_는 리프 텐서가 아니라서 .grad가 None으로 남습니다. a.grad에는 2가 누적되고, 이어서 2 + 3 = 5가 더해집니다.</translation>
        </message>
        <message>
            <source>Clone of a tensor without grad: only the clone becomes a leaf that requires grad.</source>
            <translation>기울기가 없는 텐서의 clone: clone만 requires_grad인 리프 텐서가 됩니다.</translation>
        </message>
        <message>
            <source>Leaves</source>
            <translation>리프 텐서</translation>
        </message>
        <message>
            <source>A leaf is a tensor you created (or one that needs no grad); only leaves get .grad unless retain_grad() is called.</source>
            <translation>리프 텐서는 직접 만든 텐서(또는 기울기가 필요 없는 텐서)입니다. retain_grad()를 부르지 않으면 리프 텐서만 .grad를 받습니다.</translation>
        </message>
        <message>
            <source>a needs no grad, so it is a leaf; w was created with requires_grad=True, so it is a leaf too.</source>
            <translation>a는 기울기가 필요 없으니 리프 텐서입니다. w는 requires_grad=True로 만들었으니 역시 리프 텐서입니다.</translation>
        </message>
        <message>
            <source>h is the result of an operation: not a leaf. retain_grad() asks for its .grad anyway.</source>
            <translation>h는 연산의 결과라서 리프 텐서가 아닙니다. retain_grad()를 부르면 그래도 .grad를 받습니다.</translation>
        </message>
    </context>
</TS>
