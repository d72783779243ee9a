#!/usr/bin/python3
"""Regenerate the real-module cases of the fusebox corpus from PyTorch 1.13.

    /usr/bin/python3 tests/corpus/gen_modules.py

Each case is a scripted torch.nn module (TransformerEncoderLayer,
MultiheadAttention, GRUCell, a ResNet basic block, ...): its graph with calls
inlined and every parameter and buffer lifted to a named graph input, the
inputs, PyTorch's outputs and PyTorch's gradients, in the case format of
README.md. Writes tests/corpus/modules/mod_NAME/ (the directory is rebuilt),
and nothing else (the hand-kept tests/corpus/modules_pending.txt says which
cases the corpus tests skip for now). Deterministic: fixed seeds.
"""
import os
import shutil
import sys
import zlib

sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from typing import List, Optional, Tuple  # noqa: E402,F401

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gen_corpus import clean, flatten, scalar_literal, to_numpy, write_text  # noqa: E402

OUT = os.path.join(HERE, "modules")

def rng(name):
    return np.random.RandomState(zlib.crc32(name.encode()) & 0x7FFFFFFF)


def uniform(r, *shape, lo=-1.0, hi=1.0):
    return r.uniform(lo, hi, shape).astype(np.float32)


# ---------------------------------------------------------------------------
# Modules that are not single torch.nn classes
# ---------------------------------------------------------------------------

class ConvBnRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class BasicBlock(nn.Module):
    """torchvision's ResNet BasicBlock (stride 1, no downsample)."""

    def __init__(self, c=4):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        out = out + identity
        return self.relu(out)


class EmbeddingLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 6)
        self.fc = nn.Linear(6, 3)

    def forward(self, idx):
        return self.fc(self.emb(idx))


class GeluMlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(16, 8)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class ClassifierHead(nn.Module):
    """Linear + LogSoftmax and Softmax (probabilities and log-probabilities)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 5)
        self.log_softmax = nn.LogSoftmax(dim=1)
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        z = self.fc(x)
        return self.softmax(z), self.log_softmax(z)


class DropoutTrainScale(nn.Module):
    """Dropout(p=0.5) in training mode, made deterministic: every kept
    element must be x / (1 - p) exactly, so y - x / (1 - p) is 0 where y is
    kept and the output is all zeros whatever the mask (the gradient is zero
    too). A wrong scale, or a mask that keeps a changed value, shows up."""

    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        y = self.drop(x)
        return torch.where(y != 0, y - x * 2.0, torch.zeros_like(x))


class LinearDropout(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.drop = nn.Dropout(p)

    def forward(self, x):
        return self.drop(torch.tanh(self.fc(x)))


class GruUnrolled(nn.Module):
    """nn.GRUCell over a sequence, one call per step in a scripted loop."""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(4, 5)

    def forward(self, xs, h):
        outs: List[torch.Tensor] = []
        for t in range(xs.size(0)):
            h = self.cell(xs[t], h)
            outs.append(h)
        return torch.stack(outs)


class LstmUnrolled(nn.Module):
    """nn.LSTMCell over a sequence, one call per step in a scripted loop."""

    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(4, 5)

    def forward(self, xs, h, c):
        outs: List[torch.Tensor] = []
        for t in range(xs.size(0)):
            h, c = self.cell(xs[t], (h, c))
            outs.append(h)
        return torch.stack(outs), c


class LstmCell(nn.Module):
    """nn.LSTMCell with its state as two tensors (the case format has no tuple inputs)."""

    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(4, 5)

    def forward(self, x, h, c):
        return self.cell(x, (h, c))


class LstmSeq(nn.Module):
    """nn.LSTM over a whole sequence, its initial state given as two tensors."""

    def __init__(self, **kw):
        super().__init__()
        self.lstm = nn.LSTM(4, 5, **kw)

    def forward(self, x, h, c):
        return self.lstm(x, (h, c))


class LstmSeqNoState(nn.Module):
    """nn.LSTM with no initial state (zeros, made inside the scripted forward)."""

    def __init__(self, **kw):
        super().__init__()
        self.lstm = nn.LSTM(4, 5, **kw)

    def forward(self, x):
        return self.lstm(x)


class RecSeq(nn.Module):
    """nn.GRU or nn.RNN over a whole sequence (their scripted forward is an overload set, so they are wrapped);
    h None: no initial state (zeros, made inside the scripted forward)."""

    def __init__(self, cls, **kw):
        super().__init__()
        self.rnn = cls(4, 5, **kw)

    def forward(self, x, h: Optional[torch.Tensor]):
        return self.rnn(x, h)


class PackedRnn(nn.Module):
    """A recurrent layer over padded sequences of several lengths: pack_padded_sequence, the layer on the
    packed data (aten::lstm.data and the like), pad_packed_sequence."""

    def __init__(self, cls, enforce_sorted, **kw):
        super().__init__()
        self.rnn = cls(4, 5, batch_first=True, **kw)
        self.enforce_sorted = enforce_sorted

    def forward(self, x, lengths):
        p = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=self.enforce_sorted)
        y, h = self.rnn(p)
        out, _ = nn.utils.rnn.pad_packed_sequence(y, batch_first=True, total_length=x.size(1))
        return out, h


class LstmByLinear(nn.Module):
    """An LSTM written out with Linear layers and pointwise gates, unrolled
    over the sequence by a scripted loop (the form PyTorch's fuser tests use)."""

    def __init__(self):
        super().__init__()
        self.ih = nn.Linear(4, 20)
        self.hh = nn.Linear(5, 20)

    def forward(self, xs, h, c):
        outs: List[torch.Tensor] = []
        for t in range(xs.size(0)):
            gates = self.ih(xs[t]) + self.hh(h)
            i, f, g, o = gates.chunk(4, 1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            outs.append(h)
        return torch.stack(outs), c


class GruByLinear(nn.Module):
    """A GRU written out with Linear layers, unrolled by a scripted loop."""

    def __init__(self):
        super().__init__()
        self.ih = nn.Linear(4, 15)
        self.hh = nn.Linear(5, 15)

    def forward(self, xs, h):
        for t in range(xs.size(0)):
            gi = self.ih(xs[t])
            gh = self.hh(h)
            i_r, i_z, i_n = gi.chunk(3, 1)
            h_r, h_z, h_n = gh.chunk(3, 1)
            r = torch.sigmoid(i_r + h_r)
            z = torch.sigmoid(i_z + h_z)
            n = torch.tanh(i_n + r * h_n)
            h = (1 - z) * n + z * h
        return h


class PreNormResidual(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.fc1 = nn.Linear(8, 12)
        self.fc2 = nn.Linear(12, 8)

    def forward(self, x):
        return x + self.fc2(F.silu(self.fc1(self.norm(x))))


class DepthwiseSeparable(nn.Module):
    """MobileNet-style: depthwise 3x3 conv, BatchNorm, Hardswish, pointwise 1x1."""

    def __init__(self):
        super().__init__()
        self.dw = nn.Conv2d(4, 4, 3, padding=1, groups=4, bias=False)
        self.bn = nn.BatchNorm2d(4)
        self.act = nn.Hardswish()
        self.pw = nn.Conv2d(4, 6, 1)

    def forward(self, x):
        return self.pw(self.act(self.bn(self.dw(x))))


class PoolHead(nn.Module):
    """Conv2d, ReLU, AdaptiveAvgPool2d(1), Flatten, Linear: a CNN classifier's tail."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flat = nn.Flatten()
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        return self.fc(self.flat(self.pool(F.relu(self.conv(x)))))


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 3, 3)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(3 * 3 * 3, 4)

    def forward(self, x):
        x = self.pool(F.relu(self.conv(x)))
        return self.fc(torch.flatten(x, 1))


class ActivationsMlp(nn.Module):
    """nn.Sequential of Linear layers with ELU, LeakyReLU, Softplus, Mish, Sigmoid."""

    def __init__(self):
        super().__init__()
        self.seq = nn.Sequential(nn.Linear(6, 8), nn.ELU(), nn.Linear(8, 8), nn.LeakyReLU(0.1),
                                 nn.Linear(8, 8), nn.Softplus(), nn.Linear(8, 8), nn.Mish(),
                                 nn.Linear(8, 3), nn.Sigmoid())

    def forward(self, x):
        return self.seq(x)


class Conv1dTanh(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(3, 5, 3, padding=1)
        self.act = nn.Tanh()

    def forward(self, x):
        return self.act(self.conv(x))


class GluCosine(nn.Module):
    """nn.GLU and nn.CosineSimilarity over two projections."""

    def __init__(self):
        super().__init__()
        self.fa = nn.Linear(6, 8)
        self.fb = nn.Linear(6, 4)
        self.glu = nn.GLU(dim=-1)
        self.cos = nn.CosineSimilarity(dim=-1)

    def forward(self, x):
        return self.cos(self.glu(self.fa(x)), self.fb(x))


class DcganBlock(nn.Module):
    """DCGAN generator blocks: ConvTranspose2d(stride 2, padding 1, no bias), BatchNorm2d, ReLU, twice."""

    def __init__(self):
        super().__init__()
        self.up1 = nn.ConvTranspose2d(6, 4, 4, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(4)
        self.up2 = nn.ConvTranspose2d(4, 3, 4, stride=2, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(3)

    def forward(self, z):
        return F.relu(self.bn2(self.up2(F.relu(self.bn1(self.up1(z))))))


class Decoder1d(nn.Module):
    """A 1-D decoder: ConvTranspose1d with output_padding=1 and groups=2, ReLU, then a plain one."""

    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
        self.out = nn.ConvTranspose1d(6, 2, 3, padding=1)

    def forward(self, x):
        return self.out(F.relu(self.up(x)))


class Conv3dNet(nn.Module):
    """Conv3d (padding 1), ReLU, a strided grouped Conv3d, flatten, Linear."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv3d(2, 4, 3, padding=1)
        self.c2 = nn.Conv3d(4, 4, (1, 2, 2), stride=(1, 2, 2), groups=2)
        self.fc = nn.Linear(4 * 3 * 2 * 2, 5)

    def forward(self, x):
        return self.fc(torch.flatten(self.c2(F.relu(self.c1(x))), 1))


class PreluNet(nn.Module):
    """Conv2d + PReLU(channels), then an MLP with a single-weight PReLU."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.act1 = nn.PReLU(4, init=0.2)
        self.fc1 = nn.Linear(4 * 3 * 3, 8)
        self.act2 = nn.PReLU()
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        h = torch.flatten(self.act1(self.conv(x)), 1)
        return self.fc2(self.act2(self.fc1(h)))


class MhaMasked(nn.Module):
    """Self-attention with a key padding mask (bool), batch_first."""

    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)

    def forward(self, x, mask):
        out, w = self.attn(x, x, x, key_padding_mask=mask)
        return out, w


class FpnTopDown(nn.Module):
    """An FPN top-down step: the coarser map upsampled by F.interpolate(scale_factor=2, nearest), added to a
    1x1 lateral convolution of the finer map, then a 3x3 smoothing convolution."""

    def __init__(self):
        super().__init__()
        self.lateral = nn.Conv2d(3, 4, 1)
        self.smooth = nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, top, lat):
        up = F.interpolate(top, scale_factor=2.0, mode="nearest")
        return self.smooth(up + self.lateral(lat))


class UNetUp(nn.Module):
    """A UNet decoder step: nn.Upsample(scale_factor=2, bilinear, align_corners=True), concatenated with the
    skip connection, 3x3 convolution and ReLU."""

    def __init__(self):
        super().__init__()
        self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
        self.conv = nn.Conv2d(6, 3, 3, padding=1)

    def forward(self, x, skip):
        return F.relu(self.conv(torch.cat([self.up(x), skip], 1)))


class ResizeHead(nn.Module):
    """A segmentation head's resizes: F.interpolate to a size, bilinear with align_corners False and True,
    bicubic by a scale factor, and nn.Upsample(scale_factor=2) (nearest)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 2, 1)
        self.up = nn.Upsample(scale_factor=2)

    def forward(self, x):
        y = self.conv(x)
        a = F.interpolate(y, size=[7, 9], mode="bilinear", align_corners=False)
        b = F.interpolate(y, size=[7, 9], mode="bilinear", align_corners=True)
        c = F.interpolate(y, scale_factor=1.5, mode="bicubic", align_corners=False)
        return a + b, c, self.up(y)


class Upsample3d(nn.Module):
    """Volumetric decoder resizes: nn.Upsample(scale_factor=(1, 2, 2), trilinear) and F.interpolate nearest
    to a size, on [N, C, D, H, W]."""

    def __init__(self):
        super().__init__()
        self.up = nn.Upsample(scale_factor=(1.0, 2.0, 2.0), mode="trilinear", align_corners=False)

    def forward(self, x):
        return self.up(torch.tanh(x)), F.interpolate(x, size=[3, 4, 5], mode="nearest")


class SuperResHead(nn.Module):
    """An ESPCN-style super-resolution head: PixelUnshuffle(2) into convolutions, then a convolution to
    C * r^2 channels and PixelShuffle(2) back to full resolution."""

    def __init__(self):
        super().__init__()
        self.unshuffle = nn.PixelUnshuffle(2)
        self.conv1 = nn.Conv2d(4, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 12, 3, padding=1)
        self.shuffle = nn.PixelShuffle(2)

    def forward(self, x):
        return self.shuffle(self.conv2(torch.tanh(self.conv1(self.unshuffle(x)))))


class SppHead(nn.Module):
    """Spatial pyramid pooling: AdaptiveMaxPool2d to 1x1, 2x2 and 3x3 (over a 5x5 map the 3x3 windows
    overlap), flattened, concatenated, Linear."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.p1 = nn.AdaptiveMaxPool2d(1)
        self.p2 = nn.AdaptiveMaxPool2d(2)
        self.p3 = nn.AdaptiveMaxPool2d((3, 3))
        self.fc = nn.Linear(4 * (1 + 4 + 9), 5)

    def forward(self, x):
        y = F.relu(self.conv(x))
        z = torch.cat([torch.flatten(self.p1(y), 1), torch.flatten(self.p2(y), 1), torch.flatten(self.p3(y), 1)], 1)
        return self.fc(z)


class SeMaxGate(nn.Module):
    """Squeeze-and-excitation with a max squeeze: AdaptiveMaxPool2d(1), two 1x1 convolutions, a sigmoid
    gate that scales the input's channels."""

    def __init__(self):
        super().__init__()
        self.pool = nn.AdaptiveMaxPool2d(1)
        self.fc1 = nn.Conv2d(6, 3, 1)
        self.fc2 = nn.Conv2d(3, 6, 1)

    def forward(self, x):
        return x * torch.sigmoid(self.fc2(F.relu(self.fc1(self.pool(x)))))


class SeqMaxPool(nn.Module):
    """A 1-D head: Conv1d, nn.AdaptiveMaxPool1d(3), Linear over the pooled features; and the pooling's
    indices through F.adaptive_max_pool1d(return_indices=True) (the module with return_indices=True does
    not script: its forward is annotated to return a Tensor)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(3, 4, 3, padding=1)
        self.pool = nn.AdaptiveMaxPool1d(3)
        self.fc = nn.Linear(12, 2)

    def forward(self, x):
        y = self.conv(x)
        _, idx = F.adaptive_max_pool1d(y, 3, return_indices=True)
        return self.fc(torch.flatten(self.pool(y), 1)), idx


# ---------------------------------------------------------------------------
# The cases
# ---------------------------------------------------------------------------

class MetricHead(nn.Module):
    """A metric-learning head: one embedding for anchor, positive and negative,
    scored by nn.TripletMarginLoss, nn.CosineEmbeddingLoss and nn.PairwiseDistance."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(6, 5)
        self.triplet = nn.TripletMarginLoss(margin=0.5)
        self.triplet_swap = nn.TripletMarginLoss(margin=1.0, p=1.0, swap=True, reduction="sum")
        self.cosine = nn.CosineEmbeddingLoss(margin=-0.2)
        self.dist = nn.PairwiseDistance(p=3.0, keepdim=True)

    def forward(self, a, p, n, y):
        ea, ep, en = self.embed(a), self.embed(p), self.embed(n)
        return (self.triplet(ea, ep, en), self.triplet_swap(ea, ep, en), self.cosine(ea, en, y),
                self.dist(ea, ep))


class Distillation(nn.Module):
    """Knowledge distillation: nn.KLDivLoss(batchmean) between the student's and
    the teacher's temperature-softened distributions (both learned here), plus
    nn.KLDivLoss(log_target=True) the other way round."""

    def __init__(self):
        super().__init__()
        self.student = nn.Linear(6, 4)
        self.teacher = nn.Linear(6, 4)
        self.kl = nn.KLDivLoss(reduction="batchmean")
        self.kl_log = nn.KLDivLoss(reduction="sum", log_target=True)

    def forward(self, x):
        t = 2.0
        s = F.log_softmax(self.student(x) / t, dim=-1)
        q = F.softmax(self.teacher(x) / t, dim=-1)
        lq = F.log_softmax(self.teacher(x) / t, dim=-1)
        return self.kl(s, q) * (t * t) + 0.5 * self.kl_log(lq, s)


class BagClassifier(nn.Module):
    """A bag-of-words text classifier: nn.EmbeddingBag (mean) on flat token ids
    with offsets, then a linear layer."""

    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(20, 6, mode="mean")
        self.fc = nn.Linear(6, 3)

    def forward(self, text, offsets):
        return self.fc(self.bag(text, offsets))


class BagMaxPadded(nn.Module):
    """nn.EmbeddingBag modes max (padding_idx, fixed-length 2-D input) and sum with
    per-sample weights and include_last_offset."""

    def __init__(self):
        super().__init__()
        self.bag_max = nn.EmbeddingBag(12, 4, mode="max", padding_idx=0)
        self.bag_sum = nn.EmbeddingBag(12, 4, mode="sum", include_last_offset=True)

    def forward(self, seqs, ids, offsets, weights):
        return self.bag_max(seqs) + self.bag_sum(ids, offsets, per_sample_weights=weights)


class PatchEmbed(nn.Module):
    """ViT-style patch embedding with nn.Unfold (2x2 patches of a 3x6x6 image, a
    linear projection per patch) and nn.Fold back to an image."""

    def __init__(self):
        super().__init__()
        self.unfold = nn.Unfold(kernel_size=2, stride=2)
        self.proj = nn.Linear(12, 8)
        self.back = nn.Linear(8, 12)
        self.fold = nn.Fold(output_size=(6, 6), kernel_size=2, stride=2)
        self.overlap = nn.Unfold(kernel_size=3, dilation=1, padding=1, stride=1)

    def forward(self, x):
        p = self.unfold(x).transpose(1, 2)  # [N, patches, C * 2 * 2]
        tok = F.gelu(self.proj(p))
        img = self.fold(self.back(tok).transpose(1, 2))
        return tok, img + self.overlap(x).sum(dim=1).view(-1, 1, 6, 6)


class ShrinkMlp(nn.Module):
    """nn.Hardshrink, nn.Softshrink and nn.Tanhshrink between linear layers."""

    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(6, 8)
        self.hard = nn.Hardshrink(0.3)
        self.l2 = nn.Linear(8, 8)
        self.soft = nn.Softshrink(0.2)
        self.l3 = nn.Linear(8, 4)
        self.tanh = nn.Tanhshrink()

    def forward(self, x):
        return self.tanh(self.l3(self.soft(self.l2(self.hard(self.l1(x))))))


class RankingLosses(nn.Module):
    """nn.MarginRankingLoss, nn.HingeEmbeddingLoss, nn.SoftMarginLoss,
    nn.PoissonNLLLoss, nn.MultiMarginLoss and nn.MultiLabelMarginLoss on linear
    scores."""

    def __init__(self):
        super().__init__()
        self.score = nn.Linear(5, 3)
        self.rank = nn.MarginRankingLoss(margin=0.1)
        self.hinge = nn.HingeEmbeddingLoss(margin=0.5)
        self.soft = nn.SoftMarginLoss()
        self.poisson = nn.PoissonNLLLoss(log_input=False, full=True)
        self.multi = nn.MultiMarginLoss(p=2, margin=0.7, weight=torch.tensor([1.0, 2.0, 0.5]))
        self.multilabel = nn.MultiLabelMarginLoss()

    def forward(self, x, y, labels):
        s = self.score(x)
        a, b = s[:, 0], s[:, 1]
        return (self.rank(a, b, y), self.hinge(a, y), self.soft(b, y.long()),
                self.poisson(F.softplus(a), (y + 2.0) * 1.5), self.multi(s, labels[:, 0]),
                self.multilabel(s, labels))


class CumulativeScan(nn.Module):
    """torch.cummax, torch.cummin and torch.logcumsumexp along the sequence."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        h = self.proj(x)
        mx, imx = torch.cummax(h, dim=1)
        mn, _ = torch.cummin(h, dim=1)
        return mx - mn + torch.logcumsumexp(h, dim=1), imx


class CtcHead(nn.Module):
    """A speech-style head: per-frame linear scores, log_softmax over the
    labels, nn.CTCLoss (mean over target lengths, zero_infinity)."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(5, 4)
        self.ctc = nn.CTCLoss(blank=0, zero_infinity=True)

    def forward(self, x, targets, input_lengths, target_lengths):
        return self.ctc(F.log_softmax(self.proj(x), dim=-1), targets, input_lengths, target_lengths)


class ConvSame(nn.Module):
    """Convolutions with string padding: 'same' with even and odd kernels (uneven totals pad one more zero at
    the end), dilation and groups, in 1-D, 2-D and 3-D, and 'valid'."""

    def __init__(self):
        super().__init__()
        self.c2 = nn.Conv2d(3, 4, (4, 3), padding="same")
        self.c2v = nn.Conv2d(4, 4, 3, padding="valid")
        self.c1 = nn.Conv1d(3, 4, 4, padding="same", dilation=2, groups=1)
        self.c1g = nn.Conv1d(4, 4, 2, padding="same", groups=2, bias=False)
        self.c3 = nn.Conv3d(2, 3, (2, 3, 4), padding="same", dilation=(1, 2, 1))

    def forward(self, x, y, z):
        return self.c2v(torch.relu(self.c2(x))), self.c1g(self.c1(y)), self.c3(z)


def module_specs():
    """(name, constructor, input builder(r) -> list, train mode, notes)."""
    S = []

    def add(name, make, inputs, train=False, notes=None, tol=None):
        S.append(dict(name=name, make=make, inputs=inputs, train=train, notes=notes, tol=tol))

    add("transformer_encoder",
        lambda: nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True),
        lambda r: [uniform(r, 2, 4, 8), None, None], tol="1e-4 1e-5",
        notes="nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True), eval mode; "
              "src_mask and src_key_padding_mask are None. The graph holds PyTorch's guarded fast path "
              "(aten::_transformer_encoder_layer_fwd); its guard is false because the parameters require grad.")
    add("transformer_encoder_gelu_prenorm",
        lambda: nn.TransformerEncoderLayer(8, 2, dim_feedforward=12, dropout=0.0, activation="gelu",
                                           norm_first=True),
        lambda r: [uniform(r, 3, 2, 8), None, None], tol="1e-4 1e-5",
        notes="norm_first=True, activation='gelu', sequence-first layout, eval mode.")
    add("multihead_attention",
        lambda: nn.MultiheadAttention(8, 2),
        lambda r: [uniform(r, 3, 2, 8), uniform(r, 4, 2, 8), uniform(r, 4, 2, 8), None, True, None, True], tol="1e-4 1e-5",
        notes="nn.MultiheadAttention(8, 2) on (L, N, E) query and different key/value; "
              "outputs: the attention output and the head-averaged weights.")
    add("multihead_attention_masked", MhaMasked,
        lambda r: [uniform(r, 2, 5, 8), np.array([[False] * 4 + [True], [False] * 5])], tol="1e-4 1e-5",
        notes="self-attention, batch_first, a bool key_padding_mask that hides the last key of batch 0.")
    add("gru_cell", lambda: nn.GRUCell(4, 5), lambda r: [uniform(r, 3, 4), uniform(r, 3, 5)])
    add("lstm_cell", LstmCell, lambda r: [uniform(r, 3, 4), uniform(r, 3, 5), uniform(r, 3, 5)])
    add("gru_unrolled", GruUnrolled, lambda r: [uniform(r, 4, 3, 4), uniform(r, 3, 5)])
    add("lstm_unrolled", LstmUnrolled, lambda r: [uniform(r, 4, 3, 4), uniform(r, 3, 5), uniform(r, 3, 5)])
    add("lstm_seq", lambda: LstmSeq(num_layers=2, bidirectional=True, batch_first=True),
        lambda r: [uniform(r, 3, 4, 4), uniform(r, 4, 3, 5), uniform(r, 4, 3, 5)],
        notes="nn.LSTM(4, 5, num_layers=2, bidirectional=True, batch_first=True) on [3, 4, 4] with (h0, c0) given: "
              "aten::lstm over the flat weights list.")
    add("lstm_seq_zero_state", LstmSeqNoState, lambda r: [uniform(r, 5, 2, 4)],
        notes="nn.LSTM(4, 5), time-major, no initial state (zeros made in the graph).")
    add("gru_seq", lambda: RecSeq(nn.GRU, num_layers=2), lambda r: [uniform(r, 4, 3, 4), uniform(r, 2, 3, 5)],
        notes="nn.GRU(4, 5, num_layers=2), time-major, h0 given.")
    add("gru_seq_bidir_nobias", lambda: RecSeq(nn.GRU, bidirectional=True, bias=False, batch_first=True),
        lambda r: [uniform(r, 2, 6, 4), None],
        notes="nn.GRU(4, 5, bidirectional=True, bias=False, batch_first=True), no initial state.")
    add("rnn_tanh_seq_bidir", lambda: RecSeq(nn.RNN, bidirectional=True),
        lambda r: [uniform(r, 4, 3, 4), uniform(r, 2, 3, 5)],
        notes="nn.RNN(4, 5, bidirectional=True) (tanh), h0 given.")
    add("rnn_relu_seq", lambda: RecSeq(nn.RNN, num_layers=2, nonlinearity="relu"),
        lambda r: [uniform(r, 4, 3, 4), None],
        notes="nn.RNN(4, 5, num_layers=2, nonlinearity='relu'), no initial state.")
    add("lstm_packed_unsorted", lambda: PackedRnn(nn.LSTM, False, bidirectional=True),
        lambda r: [uniform(r, 3, 5, 4), np.array([2, 5, 3], dtype=np.int64)],
        notes="nn.LSTM(4, 5, batch_first=True, bidirectional=True) over a packed sequence: pack_padded_sequence "
              "with unsorted lengths [2, 5, 3] (enforce_sorted=False), aten::lstm.data, pad_packed_sequence back "
              "to the input's length (padding positions are 0 and get no gradient).")
    add("gru_packed_sorted", lambda: PackedRnn(nn.GRU, True, num_layers=2),
        lambda r: [uniform(r, 3, 4, 4), np.array([4, 4, 1], dtype=np.int64)],
        notes="nn.GRU(4, 5, num_layers=2, batch_first=True) over a packed sequence with sorted lengths [4, 4, 1].")
    add("lstm_by_linear", LstmByLinear, lambda r: [uniform(r, 4, 3, 4), uniform(r, 3, 5), uniform(r, 3, 5)])
    add("gru_by_linear", GruByLinear, lambda r: [uniform(r, 4, 3, 4), uniform(r, 3, 5)])
    add("conv_bn_relu", ConvBnRelu, lambda r: [uniform(r, 2, 3, 5, 5)], tol="1e-4 1e-5",
        notes="eval mode: BatchNorm2d uses its running statistics (set to non-trivial values).")
    add("conv_bn_relu_train", ConvBnRelu, lambda r: [uniform(r, 2, 3, 5, 5)], train=True, tol="1e-4 1e-5",
        notes="training mode: BatchNorm2d normalizes with the batch statistics and updates the running "
              "statistics (graph inputs) in place; the outputs do not depend on them.")
    add("resnet_basic_block", BasicBlock, lambda r: [uniform(r, 2, 4, 5, 5)], tol="1e-4 1e-5",
        notes="torchvision's BasicBlock (stride 1, no downsample), eval mode, ReLU(inplace=True).")
    add("instance_norm", lambda: nn.InstanceNorm2d(3, affine=True), lambda r: [uniform(r, 2, 3, 4, 4)])
    add("group_norm", lambda: nn.GroupNorm(2, 4), lambda r: [uniform(r, 2, 4, 3, 3)])
    add("layer_norm", lambda: nn.LayerNorm([4, 6]), lambda r: [uniform(r, 3, 4, 6)])
    add("embedding_linear", EmbeddingLinear, lambda r: [r.randint(0, 10, (3, 4)).astype(np.int64)])
    add("gelu_mlp", GeluMlp, lambda r: [uniform(r, 5, 8)])
    add("max_pool", lambda: nn.MaxPool2d(2), lambda r: [uniform(r, 2, 3, 6, 6)])
    add("avg_pool", lambda: nn.AvgPool2d(2), lambda r: [uniform(r, 2, 3, 6, 6)])
    add("lenet", LeNet, lambda r: [uniform(r, 2, 1, 8, 8)])
    add("adaptive_pool_head", PoolHead, lambda r: [uniform(r, 2, 3, 6, 6)])
    add("dropout_eval", lambda: LinearDropout(0.5), lambda r: [uniform(r, 4, 6)],
        notes="nn.Dropout(0.5) in eval mode: the identity.")
    add("dropout_train_p0", lambda: LinearDropout(0.0), lambda r: [uniform(r, 4, 6)], train=True,
        notes="nn.Dropout(0.0) in training mode: deterministic (every element kept, scale 1).")
    add("dropout_train_scale", DropoutTrainScale, lambda r: [uniform(r, 6, 7, lo=0.5, hi=2.0)], train=True,
        notes="nn.Dropout(0.5) in training mode (random): the module returns y - 2x where y is kept and 0 "
              "elsewhere, which is all zeros for every mask (x holds no zeros), so the outputs and gradients "
              "are deterministic and check the 1/(1-p) scale.")
    add("classifier_head", ClassifierHead, lambda r: [uniform(r, 4, 8)])
    add("prenorm_residual", PreNormResidual, lambda r: [uniform(r, 2, 3, 8)])
    add("depthwise_separable", DepthwiseSeparable, lambda r: [uniform(r, 2, 4, 5, 5)], tol="1e-4 1e-5")
    add("activations_mlp", ActivationsMlp, lambda r: [uniform(r, 4, 6)])
    add("conv1d_tanh", Conv1dTanh, lambda r: [uniform(r, 2, 3, 7)])
    add("glu_cosine", GluCosine, lambda r: [uniform(r, 4, 6)])
    add("dcgan_block", DcganBlock, lambda r: [uniform(r, 2, 6, 3, 3)], tol="1e-4 1e-5",
        notes="two DCGAN generator blocks (ConvTranspose2d(k=4, stride=2, padding=1, bias=False), BatchNorm2d, "
              "ReLU), eval mode; the scripted ConvTranspose2d computes its output_padding from output_size=None.")
    add("dcgan_block_train", DcganBlock, lambda r: [uniform(r, 2, 6, 3, 3)], train=True, tol="1e-4 1e-5",
        notes="the DCGAN blocks in training mode (batch statistics).")
    add("decoder_1d", Decoder1d, lambda r: [uniform(r, 2, 4, 5)], tol="1e-4 1e-5",
        notes="ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2), ReLU, "
              "ConvTranspose1d(6, 2, 3, padding=1).")
    add("conv_transpose2d_dilated",
        lambda: nn.ConvTranspose2d(3, 4, 3, stride=1, padding=1, output_padding=1, dilation=2),
        lambda r: [uniform(r, 2, 3, 5, 4), None], tol="1e-4 1e-5",
        notes="nn.ConvTranspose2d itself (its forward's output_size argument is None): dilation 2 and "
              "output_padding 1, which PyTorch allows at stride 1 because it is below the dilation.")
    add("conv3d_net", Conv3dNet, lambda r: [uniform(r, 2, 2, 3, 4, 4)], tol="1e-4 1e-5")
    add("prelu_net", PreluNet, lambda r: [uniform(r, 2, 3, 5, 5)], tol="1e-4 1e-5",
        notes="nn.PReLU(4) per channel after a Conv2d, nn.PReLU() (one weight) in the MLP.")
    add("fpn_top_down", FpnTopDown, lambda r: [uniform(r, 2, 4, 3, 4), uniform(r, 2, 3, 6, 8)], tol="1e-4 1e-5",
        notes="F.interpolate(scale_factor=2.0, mode='nearest') in an FPN top-down step.")
    add("unet_up", UNetUp, lambda r: [uniform(r, 2, 3, 3, 4), uniform(r, 2, 3, 6, 8)], tol="1e-4 1e-5",
        notes="nn.Upsample(scale_factor=2, mode='bilinear', align_corners=True) in a UNet decoder step.")
    add("resize_head", ResizeHead, lambda r: [uniform(r, 2, 3, 4, 5)], tol="1e-4 1e-5",
        notes="F.interpolate to size=[7, 9] (bilinear, align_corners False and True), bicubic by 1.5, "
              "nn.Upsample(scale_factor=2) nearest.")
    add("upsample_3d", Upsample3d, lambda r: [uniform(r, 1, 2, 2, 3, 3)],
        notes="nn.Upsample(scale_factor=(1, 2, 2), mode='trilinear') and F.interpolate(size=[3, 4, 5]) nearest.")
    add("super_res_head", SuperResHead, lambda r: [uniform(r, 2, 1, 6, 8)], tol="1e-4 1e-5",
        notes="nn.PixelUnshuffle(2), convolutions, nn.PixelShuffle(2).")
    add("spp_head", SppHead, lambda r: [uniform(r, 2, 3, 5, 5)], tol="1e-4 1e-5",
        notes="nn.AdaptiveMaxPool2d to 1, 2 and (3, 3) (the 3x3 windows overlap on a 5x5 map).")
    add("se_max_gate", SeMaxGate, lambda r: [uniform(r, 2, 6, 4, 5)], tol="1e-4 1e-5",
        notes="squeeze-and-excitation with nn.AdaptiveMaxPool2d(1) as the squeeze.")
    add("seq_max_pool", SeqMaxPool, lambda r: [uniform(r, 2, 3, 8)], tol="1e-4 1e-5",
        notes="nn.AdaptiveMaxPool1d(3); F.adaptive_max_pool1d's indices are the second output.")
    add("metric_learning_head", MetricHead,
        lambda r: [uniform(r, 4, 6), uniform(r, 4, 6), uniform(r, 4, 6), np.array([1.0, -1.0, -1.0, 1.0], np.float32)],
        notes="outputs: triplet loss (mean), triplet loss (swap, p=1, sum), cosine embedding loss, pairwise "
              "distance (p=3, keepdim).")
    add("distillation_kl", Distillation, lambda r: [uniform(r, 5, 6, lo=-2, hi=2)])
    add("embedding_bag_classifier", BagClassifier,
        lambda r: [r.randint(0, 20, (11,)).astype(np.int64), np.array([0, 4, 4, 9], np.int64)],
        notes="four bags of token ids, one of them empty (its mean is 0).")
    add("embedding_bag_max_sum", BagMaxPadded,
        lambda r: [r.randint(0, 12, (3, 4)).astype(np.int64), r.randint(0, 12, (7,)).astype(np.int64),
                   np.array([0, 2, 5, 7], np.int64), uniform(r, 7)],
        notes="mode max with padding_idx 0 on a [3, 4] batch (offsets None); mode sum with per-sample weights "
              "and include_last_offset.")
    add("patch_embed_fold", PatchEmbed, lambda r: [uniform(r, 2, 3, 6, 6)])
    add("shrink_mlp", ShrinkMlp, lambda r: [uniform(r, 5, 6, lo=-2, hi=2)])
    add("ranking_losses", RankingLosses,
        lambda r: [uniform(r, 6, 5), np.array([1.0, -1.0, 1.0, 1.0, -1.0, -1.0], np.float32),
                   np.array([[2, 0, -1], [1, -1, 0], [0, 1, 2], [2, -1, -1], [1, 2, -1], [0, -1, 1]], np.int64)],
        notes="the targets are a graph input that requires grad in PyTorch: soft_margin_loss gets them as int64 "
              "(PyTorch has no gradient for its target); MultiMarginLoss has a class weight (a buffer).")
    add("cumulative_scan", CumulativeScan, lambda r: [uniform(r, 2, 5, 4)])
    add("ctc_head", CtcHead,
        lambda r: [uniform(r, 7, 3, 5, lo=-2, hi=2), np.array([[1, 2, 2], [3, 1, 0], [2, 3, 1]], np.int64),
                   np.array([7, 6, 2], np.int64), np.array([3, 2, 3], np.int64)],
        notes="(T, N, C) = (7, 3, 4); the third sample cannot fit its 3 labels in 2 frames: an infinite loss "
              "that zero_infinity turns to 0 (and its gradient with it).")
    add("conv_same_padding", ConvSame,
        lambda r: [uniform(r, 2, 3, 7, 6), uniform(r, 2, 3, 9), uniform(r, 1, 2, 4, 5, 6)],
        notes="aten::conv1d/2d/3d.padding: padding='same' (kernel 4: 3 zeros, 1 before and 2 after; dilation 2 "
              "with kernel 4: 6, even) and 'valid'.")
    return S


# ---------------------------------------------------------------------------
# Lowering: a scripted module's inlined graph with attributes resolved
# ---------------------------------------------------------------------------

def param_name(path):
    n = path.replace(".", "_")
    return n if not n[0].isdigit() else "m" + n


def lower(scripted):
    """The inlined forward graph with `self` gone: every prim::GetAttr chain
    that ends in a tensor (parameter or buffer) becomes a graph input named
    after its path (conv1.weight -> conv1_weight), in order of first use;
    the other attributes (training, eps, ...) become constants. Returns the
    graph and [(input name, attribute path, tensor)]."""
    g = scripted.inlined_graph
    self_v = next(g.inputs())
    lifted, by_path = [], {}

    def resolve(node):
        path, n = [], node
        while True:
            path.append(n.s("name"))
            src = n.input()
            if src is self_v or src.debugName() == self_v.debugName():
                break
            n = src.node()
            assert n.kind() == "prim::GetAttr", n
        path.reverse()
        obj = scripted
        for p in path:
            obj = getattr(obj, p)
        return ".".join(path), obj

    def lift(path, val, typ):
        if path not in by_path:
            v = g.addInput()
            v.setDebugName(param_name(path))
            v.setType(typ)
            by_path[path] = v
            lifted.append([path, val])
        return by_path[path]

    for n in g.findAllNodes("prim::GetAttr"):
        path, val = resolve(n)
        if isinstance(val, torch.nn.Module):
            continue
        if isinstance(val, torch.Tensor):
            n.output().replaceAllUsesWith(lift(path, val, n.output().type()))
        elif isinstance(val, list) and val and all(isinstance(t, torch.Tensor) for t in val):
            # a list of parameters (nn.LSTM's _flat_weights): one input per element, named after
            # the parameter (the owner's _flat_weights_names), gathered by a prim::ListConstruct
            owner = scripted
            for p in path.split(".")[:-1]:
                owner = getattr(owner, p)
            names = list(getattr(owner, "_flat_weights_names", []))
            prefix = path.rsplit(".", 1)[0] + "." if "." in path else ""
            elems = [lift(prefix + names[k] if k < len(names) else "%s.%d" % (path, k), t, torch._C.TensorType.get())
                     for k, t in enumerate(val)]
            lc = g.create("prim::ListConstruct", elems)
            lc.output().setType(torch._C.ListType.ofTensors())
            lc.insertBefore(n)
            n.output().replaceAllUsesWith(lc.output())
        else:
            c = g.insertConstant(val)
            c.node().moveBefore(n)
            n.output().replaceAllUsesWith(c)
    changed = True
    while changed:
        changed = False
        for n in g.findAllNodes("prim::GetAttr"):
            if not n.output().uses():
                n.destroy()
                changed = True
                break
    assert not g.findAllNodes("prim::GetAttr")
    g.eraseInput(0)
    names = [v.debugName() for v in g.inputs()]
    k = len(names) - len(lifted)
    out = [(names[k + i], path, t) for i, (path, t) in enumerate(lifted)]
    return g, out


# ---------------------------------------------------------------------------
# Writing a case
# ---------------------------------------------------------------------------

def leaves(v, out):
    if isinstance(v, (tuple, list)):
        for e in v:
            leaves(e, out)
    else:
        out.append(v)
    return out


def to_t(a):
    if isinstance(a, np.ndarray):
        return torch.from_numpy(a.copy())
    if isinstance(a, tuple):
        return tuple(to_t(e) for e in a)
    return a


def set_buffers(m, r):
    """Non-trivial running statistics for BatchNorm (fresh ones are 0 and 1)."""
    for mod in m.modules():
        if isinstance(mod, nn.modules.batchnorm._BatchNorm):
            mod.running_mean.copy_(torch.from_numpy(uniform(r, mod.num_features, lo=-0.5, hi=0.5)))
            mod.running_var.copy_(torch.from_numpy(uniform(r, mod.num_features, lo=0.5, hi=2.0)))


def gen_case(spec):
    name = spec["name"]
    r = rng(name)
    torch.manual_seed(zlib.crc32(name.encode()) & 0x7FFFFFFF)
    m = spec["make"]()
    with torch.no_grad():
        set_buffers(m, r)
    m.train(spec["train"])
    s = torch.jit.script(m)
    g, params = lower(s)
    text = clean(str(g))
    d = os.path.join(OUT, "mod_" + name)
    os.makedirs(d)
    write_text(os.path.join(d, "graph.ir"), text)

    # graph inputs: the forward arguments (a tuple argument is one input), then the lifted tensors
    args = spec["inputs"](r)
    gnames = [v.debugName() for v in g.inputs()]
    assert len(gnames) == len(args) + len(params), (name, gnames)
    values = list(args) + [t.detach().numpy().copy() for _, _, t in params]
    lines = []
    for k, a in enumerate(values):
        if isinstance(a, np.ndarray):
            np.save(os.path.join(d, "in%d.npy" % k), a)
            lines.append("in%d.npy" % k)
        elif isinstance(a, tuple):
            raise TypeError("%s: tuple inputs are not in the case format" % name)
        else:
            lines.append(scalar_literal(a))
    write_text(os.path.join(d, "args"), "\n".join(lines) + "\n")

    # PyTorch's outputs: the eager module (parameters require grad, as always)
    xs = [to_t(a) for a in args]
    for t in leaves(xs, []):
        if isinstance(t, torch.Tensor) and t.is_floating_point():
            t.requires_grad_(True)
    mm = spec["make"]()
    mm.load_state_dict(m.state_dict())
    mm.train(spec["train"])
    eager = leaves(mm(*xs), [])
    # the lowered graph must compute the same (buffers cloned: training mode updates them)
    fn = torch._C._create_function_from_graph("forward", g)
    gin = [to_t(a) for a in args] + [t.detach().clone() for _, _, t in params]
    scripted_outs = leaves(fn(*gin), [])
    assert len(scripted_outs) == len(eager), name
    for k, (o, e) in enumerate(zip(scripted_outs, eager)):
        assert torch.allclose(o.detach().double(), e.detach().double(), rtol=1e-5, atol=1e-6), (name, k)
        np.save(os.path.join(d, "out%d.npy" % k), to_numpy(e))

    # gradients: of the float inputs and the parameters (buffers never require grad)
    wrt = [(gnames[k], t) for k, t in enumerate(xs) if isinstance(t, torch.Tensor) and t.requires_grad]
    pmap = dict(mm.named_parameters())
    wrt += [(gn, pmap[path]) for gn, path, _ in params if path in pmap]
    gr = rng("grad:" + name)
    sel, gouts = [], []
    for k, o in enumerate(eager):
        if isinstance(o, torch.Tensor) and o.is_floating_point() and o.requires_grad:
            go = gr.standard_normal(tuple(o.shape)).astype(np.float32)
            np.save(os.path.join(d, "grad_out%d.npy" % k), go)
            sel.append(o)
            gouts.append(torch.from_numpy(go))
    notes = [spec["notes"]] if spec["notes"] else []
    notes.append("module case (gen_modules.py): %s in %s mode, scripted and inlined; graph inputs after the "
                 "forward arguments are its parameters and buffers: %s."
                 % (type(m).__name__, "training" if spec["train"] else "eval",
                    ", ".join("%s=%s" % (gn, path) for gn, path, _ in params)))
    if sel:
        grads = torch.autograd.grad(sel, [t for _, t in wrt], gouts, allow_unused=True)
        for (gn, _), gv in zip(wrt, grads):
            if gv is not None:
                np.save(os.path.join(d, "grad_%s.npy" % gn), np.array(gv.numpy(), order="C"))
    if spec["tol"]:
        write_text(os.path.join(d, "tol"), spec["tol"] + "\n")
    write_text(os.path.join(d, "notes"), "\n".join(notes) + "\n")
    return len(eager)


def main():
    torch.manual_seed(0)
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    specs = module_specs()
    only = sys.argv[1:]
    for s in specs:
        if only and s["name"] not in only:
            continue
        gen_case(s)
    print("module cases: %d" % len(specs))


if __name__ == "__main__":
    main()
