# tutorial: beginner_source/examples_tensor/polynomial_numpy.py
# ruff: noqa  (tutorial code, kept in the tutorial's own style)
# Warm-up: fit a cubic to sin(x) with numpy alone, gradients worked out by hand.
import numpy as np
import math

np.random.seed(0)

x = np.linspace(-math.pi, math.pi, 2000)
y = np.sin(x)

# random starting weights
a = np.random.randn()
b = np.random.randn()
c = np.random.randn()
d = np.random.randn()

learning_rate = 1e-6
for t in range(20):
    # forward: y = a + b x + c x^2 + d x^3
    y_pred = a + b * x + c * x ** 2 + d * x ** 3

    loss = np.square(y_pred - y).sum()
    if t % 5 == 4:
        print(t, loss)

    # backward by hand
    grad_y_pred = 2.0 * (y_pred - y)
    grad_a = grad_y_pred.sum()
    grad_b = (grad_y_pred * x).sum()
    grad_c = (grad_y_pred * x ** 2).sum()
    grad_d = (grad_y_pred * x ** 3).sum()

    a -= learning_rate * grad_a
    b -= learning_rate * grad_b
    c -= learning_rate * grad_c
    d -= learning_rate * grad_d

print(f'Result: y = {a} + {b} x + {c} x^2 + {d} x^3')
