# api tour: not a tutorial, the API names real code uses that gradviz once refused
# (issue 8's list), each used the way PyTorch's docs show it
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence, pack_padded_sequence, pad_packed_sequence
from torch.utils.checkpoint import checkpoint
from torch.utils.data import Dataset, DataLoader
from torch.func import grad, vmap, jacrev, functional_call

torch.manual_seed(0)
x = torch.randn(4, 3, requires_grad=True)

# tensor API
rows = torch.unbind(x)
rolled = x.roll(1, dims=0) + torch.roll(x, 1, 0)
rep = x.repeat_interleave(2, dim=0)
idx = torch.tensor([0, 1, 0, 1])
sa = torch.zeros(2, 3).scatter_add(0, idx.unsqueeze(1).expand(4, 3), x)
ia = torch.zeros(2, 3).index_add(0, idx, x)
med = x.median(dim=0)
kth = torch.kthvalue(x, 2, dim=1)
cm = torch.cummax(x, dim=0)
tad = torch.take_along_dim(x, x.argsort(dim=1), dim=1)
z = torch.complex(x.detach(), x.detach() * 2)
vr = torch.view_as_real(z)
mx = x.max(dim=0)
print(mx.values, mx.indices, med.values, kth.indices, cm.values.shape)

# linalg, fft, special
a = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
inv = torch.linalg.inv(a @ a.T + torch.eye(3, dtype=torch.float64))
sv = torch.linalg.svdvals(a)
spec = torch.fft.rfft(x, dim=1).abs()
sp = torch.special.xlogy(x.abs(), x.abs() + 1)
print(inv.shape, sv.shape, spec.shape)

# functional layers
q = torch.randn(1, 2, 4, 8)
att = F.scaled_dot_product_attention(q, q, q)
up = F.interpolate(torch.randn(1, 1, 2, 2), scale_factor=2, mode="nearest")
ap = F.adaptive_avg_pool2d(torch.randn(1, 2, 5, 5), 1)
ct = F.conv_transpose2d(torch.randn(1, 2, 3, 3), torch.randn(2, 1, 2, 2))
kl = F.kl_div(F.log_softmax(x, dim=1), F.softmax(torch.ones(4, 3), dim=1), reduction="batchmean")
print(att.shape, up.shape, ap.shape, ct.shape)

# modules: LSTMCell, state_dict, apply, clip_grad_norm_
cell = nn.LSTMCell(3, 5)
h, c = cell(x)
net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))


def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.constant_(m.bias, 0.1)


net.apply(init_weights)
state = net.state_dict()
twin = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
twin.load_state_dict(state)
print(sorted(state.keys()))

seen = []


def after_accumulate(p):
    seen.append(p.grad.norm().item() > 0)


for p in net.parameters():
    p.register_post_accumulate_grad_hook(after_accumulate)

loss = net(x).pow(2).mean() + twin(x).sum() * 0 + h.sum() * 0.1 + kl + (rolled.sum() + rep.sum() + sa.sum() + ia.sum() + tad.sum()) * 0.01
loss.backward()
total = nn.utils.clip_grad_norm_(net.parameters(), max_norm=0.5)
print(len(seen), total > 0)

# sequences
seqs = [torch.randn(3, 2), torch.randn(2, 2)]
padded = pad_sequence(seqs)
packed = pack_padded_sequence(padded, [3, 2])
unpacked, lengths = pad_packed_sequence(packed)
print(padded.shape, packed.data.shape, lengths)

# higher-order autograd
w = torch.randn(3, requires_grad=True)


def cube_sum(t):
    return (t ** 3).sum()


jac = torch.autograd.functional.jacobian(lambda t: t ** 2, w)
hes = torch.autograd.functional.hessian(cube_sum, w)
g = grad(cube_sum)(w.detach())
gg = grad(grad(lambda t: t.sin()))(torch.tensor(1.0))
batched = vmap(lambda r: r.sum())(torch.ones(4, 3))
jr = jacrev(lambda t: t.sin())(torch.ones(3))
params = {k: v.detach() for k, v in net.named_parameters()}
out = functional_call(net, params, (x.detach(),))
print(jac.shape, hes.shape, g, gg, batched, jr.shape, out.shape)

# checkpointing recomputes the block in backward
y = torch.randn(2, 3, requires_grad=True)
ck = checkpoint(lambda t: t.sin().cos(), y, use_reentrant=False).sum()
ck.backward()
print(y.grad)

# distributions
dist = torch.distributions.Normal(torch.zeros(3), torch.ones(3))
mu = torch.zeros(3, requires_grad=True)
sample = torch.distributions.Normal(mu, 1.0).rsample()
lp = dist.log_prob(sample).sum()
lp.backward()
print(mu.grad.shape, dist.mean, dist.stddev)


# a Dataset class with a generator method
class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        t = torch.tensor(float(i))
        return t, t * t

    def pairs(self):
        for i in range(self.n):
            yield self[i]


ds = Squares(6)
for xb, yb in DataLoader(ds, batch_size=4):
    print(xb, yb)
print([b.item() for a, b in ds.pairs()], type(ds).__name__, type(len(ds)))

# the defaults a script sets are its own
torch.set_default_dtype(torch.float64)
d64 = torch.ones(2)
torch.set_default_dtype(torch.float32)
torch.set_default_device("cpu")
print(d64.dtype, torch.ones(1).device)
