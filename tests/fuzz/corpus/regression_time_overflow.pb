
¨
¥
,/job:localhost/replica:0/task:0/device:CPU:0L
step_000000­šöÚ¬š˜z (Bstep_000000 = TrainingStep()PÑah¾ò½«¦íõx».€».6
a/b¯šöÚ¬š˜ (Ba/b = MatMul()PÑahµ†¾«¦íõxü€ü-
c°šöÚ¬š˜ (Bc = c()PÑah¦‹¾«¦õõxô€ôL
step_000001µšöÚ¬š˜ (Bstep_000001 = TrainingStep()PÑahÒ±¾«¦íõxƒ€ƒ6
a/bµšöÚ¬š˜ (Ba/b = MatMul()PÑahÊµ¾«¦íõxŞ€,Ş)
c¶šöÚ¬š˜Bc = c()PÑah„¸¾«¦íõx€Ña
MainThread