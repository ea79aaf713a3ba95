# source: MorvanZhou/PyTorch-Tutorial/tutorial-contents/406_GAN.py at commit 921b69a ("update to torch
#         0.4"), the version reported in pytorch/pytorch#39141: it stopped working in torch 1.5 because
#         opt_D.step() changes D's weights in place before G_loss.backward() needs them
#         (https://github.com/MorvanZhou/PyTorch-Tutorial/blob/921b69a/tutorial-contents/406_GAN.py)
# shrunk: seeds set to 0 (the file has torch.manual_seed(1)/np.random.seed(1) commented out);
#         BATCH_SIZE 64 -> 16; the 10000-step loop is unrolled to its first step, which is where
#         it fails; matplotlib plotting removed.
# expected: the LAST statement, G_loss.backward(), raises RuntimeError ("one of the variables needed
#         for gradient computation has been modified by an inplace operation ...").
# ruff: noqa
import torch
import torch.nn as nn
import numpy as np

torch.manual_seed(0)    # reproducible
np.random.seed(0)

# Hyper Parameters
BATCH_SIZE = 16
LR_G = 0.0001           # learning rate for generator
LR_D = 0.0001           # learning rate for discriminator
N_IDEAS = 5             # think of this as number of ideas for generating an art work (Generator)
ART_COMPONENTS = 15     # it could be total point G can draw in the canvas
PAINT_POINTS = np.vstack([np.linspace(-1, 1, ART_COMPONENTS) for _ in range(BATCH_SIZE)])


def artist_works():     # painting from the famous artist (real target)
    a = np.random.uniform(1, 2, size=BATCH_SIZE)[:, np.newaxis]
    paintings = a * np.power(PAINT_POINTS, 2) + (a-1)
    paintings = torch.from_numpy(paintings).float()
    return paintings

G = nn.Sequential(                      # Generator
    nn.Linear(N_IDEAS, 128),            # random ideas (could from normal distribution)
    nn.ReLU(),
    nn.Linear(128, ART_COMPONENTS),     # making a painting from these random ideas
)

D = nn.Sequential(                      # Discriminator
    nn.Linear(ART_COMPONENTS, 128),     # receive art work either from the famous artist or a newbie like G
    nn.ReLU(),
    nn.Linear(128, 1),
    nn.Sigmoid(),                       # tell the probability that the art work is made by artist
)

opt_D = torch.optim.Adam(D.parameters(), lr=LR_D)
opt_G = torch.optim.Adam(G.parameters(), lr=LR_G)

# for step in range(10000):   -- first step
artist_paintings = artist_works()           # real painting from artist
G_ideas = torch.randn(BATCH_SIZE, N_IDEAS)  # random ideas
G_paintings = G(G_ideas)                    # fake painting from G (random ideas)

prob_artist0 = D(artist_paintings)          # D try to increase this prob
prob_artist1 = D(G_paintings)               # D try to reduce this prob

D_loss = - torch.mean(torch.log(prob_artist0) + torch.log(1. - prob_artist1))
G_loss = torch.mean(torch.log(1. - prob_artist1))

opt_D.zero_grad()
D_loss.backward(retain_graph=True)      # reusing computational graph
opt_D.step()

opt_G.zero_grad()
G_loss.backward()
