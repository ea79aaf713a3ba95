# source: pytorch/examples/word_language_model/model.py (PositionalEncoding, TransformerModel)
#         and main.py with --model Transformer (https://github.com/pytorch/examples/tree/main/word_language_model)
# shrunk: corpus replaced by torch.randint token ids over a 20-word vocabulary (fixed seed);
#         emsize 16, nhid 32, nhead 2, nlayers 1, bptt 5, batch 4, epochs 1 (one pass, 3 batches);
#         parse_known_args([]) with defaults; no checkpoint file, no ONNX export.
# ruff: noqa
import argparse
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


# Temporarily leave PositionalEncoding module here. Will be moved somewhere else.
class PositionalEncoding(nn.Module):
    r"""Inject some information about the relative or absolute position of the tokens in the sequence.
        The positional encodings have the same dimension as the embeddings, so that the two can be summed.
        Here, we use sine and cosine functions of different frequencies.
    """

    def __init__(self, d_model, dropout=0.1, max_len=5000):
        super(PositionalEncoding, self).__init__()
        self.dropout = nn.Dropout(p=dropout)

        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0).transpose(0, 1)
        self.register_buffer('pe', pe)

    def forward(self, x):
        x = x + self.pe[:x.size(0), :]
        return self.dropout(x)


class TransformerModel(nn.Transformer):
    """Container module with an encoder, a recurrent or transformer module, and a decoder."""

    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
        super(TransformerModel, self).__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid, num_encoder_layers=nlayers)
        self.model_type = 'Transformer'
        self.src_mask = None
        self.pos_encoder = PositionalEncoding(ninp, dropout, max_len=64)

        self.input_emb = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)

        self.init_weights()

    def _generate_square_subsequent_mask(self, sz):
        return torch.log(torch.tril(torch.ones(sz, sz)))

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.input_emb.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, src, has_mask=True):
        if has_mask:
            device = src.device
            if self.src_mask is None or self.src_mask.size(0) != len(src):
                mask = self._generate_square_subsequent_mask(len(src)).to(device)
                self.src_mask = mask
        else:
            self.src_mask = None

        src = self.input_emb(src) * math.sqrt(self.ninp)
        src = self.pos_encoder(src)
        output = self.encoder(src, mask=self.src_mask)
        output = self.decoder(output)
        return F.log_softmax(output, dim=-1)


parser = argparse.ArgumentParser(description='PyTorch Wikitext-2 RNN/LSTM/GRU/Transformer Language Model')
parser.add_argument('--model', type=str, default='Transformer')
parser.add_argument('--emsize', type=int, default=16)
parser.add_argument('--nhid', type=int, default=32)
parser.add_argument('--nlayers', type=int, default=1)
parser.add_argument('--lr', type=float, default=20)
parser.add_argument('--clip', type=float, default=0.25)
parser.add_argument('--batch_size', type=int, default=4, metavar='N')
parser.add_argument('--bptt', type=int, default=5)
parser.add_argument('--dropout', type=float, default=0.2)
parser.add_argument('--seed', type=int, default=1111)
parser.add_argument('--nhead', type=int, default=2)
args, _unknown = parser.parse_known_args([])

torch.manual_seed(args.seed)
device = torch.device("cpu")

ntokens = 20
train_data = torch.randint(0, ntokens, (64,)).view(args.batch_size, -1).t().contiguous()
model = TransformerModel(ntokens, args.emsize, args.nhead, args.nhid, args.nlayers, args.dropout).to(device)
criterion = nn.NLLLoss()


def get_batch(source, i):
    seq_len = min(args.bptt, len(source) - 1 - i)
    data = source[i:i+seq_len]
    target = source[i+1:i+1+seq_len].view(-1)
    return data, target


lr = args.lr
model.train()
total_loss = 0.
for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
    if batch == 3:
        break
    data, targets = get_batch(train_data, i)
    model.zero_grad()
    output = model(data)
    output = output.view(-1, ntokens)
    loss = criterion(output, targets)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-lr)
    total_loss += loss.item()
    print('| batch {:3d} | lr {:02.2f} | loss {:5.2f} | ppl {:8.2f}'.format(
        batch, lr, loss.item(), math.exp(loss.item())))

model.eval()
with torch.no_grad():
    data, targets = get_batch(train_data, 0)
    eval_output = model(data).view(-1, ntokens)
    eval_loss = criterion(eval_output, targets)
print('eval loss {:5.2f}'.format(eval_loss.item()))
